"""Pandas idioms shown only to the requests that need them (agent/tips.py)."""

from cave_tui.agent import CaveAgent
from cave_tui.agent.policies.tips import MAX_TIPS, TIPS_HEADER, tips_for, tips_text
from cave_tui.agent.prompt import DEFAULT_SYSTEM_INSTRUCTIONS
from cave_tui.models import ScriptedModel
from cave_tui.runtime.shipped import links
from cave_tui.runtime.shipped.summary import summarize
from tests.agent.policies.frames import AIRLINES, AIRPORTS, FLIGHTS


def _names(request: str) -> list[str]:
    return [tip.name for tip in tips_for(request)]


def test_each_tip_answers_its_class_of_request_in_other_words_too():
    assert _names("Which species-island combination is most common?") == ["pair"]
    assert _names("Show the most common destination per carrier.") == ["mode per group"]
    assert _names("What fraction of penguins on each island are male?") == ["rate per group"]
    assert _names("For every month, how many flights were cancelled?") == ["count per group"]
    assert _names("Count the flights by the time zone of their airport.") == ["count per group"]
    assert _names("Label them by the airline's full name.") == ["names for codes"]


def test_requests_of_other_classes_get_no_tip():
    for request in (
        "How many planes made by EMBRAER are in the registry?",  # one count, no groups
        "Compute the mean dep_delay by number of engines.",  # a mean, not a count
        "Which island has the longest flipper? Store its name as a string.",
        "Make a DataFrame `late` with the flights over 60 minutes late.",
    ):
        assert tips_for(request) == [], request
    # A mode per group is no count per group, a pair no mode per group.
    assert _names("Count the most common destination of each origin.") == ["mode per group"]
    assert _names("The most common pair per origin.") == ["pair"]


def test_at_most_two_tips_under_a_header():
    request = "Count flights per carrier, most common pair, full names, share of each"
    assert len(tips_for(request)) == MAX_TIPS
    text = tips_text(request)
    assert text.startswith(TIPS_HEADER + "\n- ") and text.count("\n- ") == MAX_TIPS
    assert tips_text("Sum the delays.") == ""


async def test_tips_go_under_the_namespace_and_never_into_the_system_prompt(runtime):
    assert "value_counts().idxmax()" not in DEFAULT_SYSTEM_INSTRUCTIONS
    model = ScriptedModel(["```python\nn = flights.groupby('carrier').size()\n```", "Done."])
    await CaveAgent(model, runtime, policies="guided,tips").run(
        "Count the flights per carrier; store them in `n`."
    )
    for request in model.requests:  # every call of the turn: the tip stays in view
        system, *_, last = request
        assert "Rows per a: df.groupby('a').size()" not in system["content"]
        namespace, _, rest = last["content"].partition(TIPS_HEADER)
        assert namespace.startswith("Namespace (live)") and "groupby('a').size()" in rest
    # A turn about something else has none.
    model = ScriptedModel(["Done."])
    await CaveAgent(model, runtime, policies="guided,tips").run("Sum the delays.")
    assert TIPS_HEADER not in model.requests[0][-1]["content"]


def test_the_names_tip_names_the_lookup_frame_the_request_is_about():
    ns = {"flights": FLIGHTS, "airports": AIRPORTS, "airlines": AIRLINES}
    rows = [summarize(name, obj) for name, obj in ns.items()]
    links.annotate(ns, rows)
    text = tips_text("Label them by the airline's full name.", rows)
    assert "names = airlines.set_index('carrier')['name']" in text
    # Two lookup frames and no word for either: the general tip.
    assert "set_index('code')" in tips_text("Show the full names.", rows)
