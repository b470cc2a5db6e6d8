"""The default preset never slows or refuses a capable model's correct work.

Each scripted model writes correct code the way strong models do; each must cost exactly
the calls it needs (code, then the answer) with no refusal, doubt or rewind fed back, and
no note of work left behind. The default is `auto`: a capable model (hosted, or of a size
cave cannot read) gets `lean`, with the aids of issue 35 that add no call (the preset by
model class, the report of a turn's kept work); `small` adds `look_first`, which does.
"""

import pandas as pd
import pytest

from cave_tui import CaveAgent, Function, Variable
from cave_tui.agent import events as ev
from cave_tui.agent.events import InterventionKind
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime
from tests.agent.policies.helpers import fenced, interventions, run_turn

STOPPING = {InterventionKind.REFUSE, InterventionKind.DOUBT, InterventionKind.REWIND}


def _stopped(events) -> list:
    """Refusals, doubts and rewinds, and notes of kept work: none for correct work."""
    notes = [
        ("kept_work", e.kind)
        for e in events
        if isinstance(e, ev.NoticeEvent) and e.kind is ev.NoticeKind.KEPT_WORK
    ]
    return [(p, kind) for p, kind in interventions(events) if kind in STOPPING] + notes


@pytest.fixture(autouse=True)
def _capable_model_ids(monkeypatch):
    """Every scripted model here presents itself as a hosted capable model does."""
    monkeypatch.setattr(ScriptedModel.__init__, "__defaults__", ("anthropic/claude-sonnet-4-5",))


def test_a_capable_model_gets_the_lean_preset_by_its_class():
    agent = CaveAgent(ScriptedModel([]), display=False)
    assert agent.model.model_id == "anthropic/claude-sonnet-4-5"
    assert agent.preset_choice.describe() == "lean (not a local model)"
    assert "look_first" not in [p.name for p in agent.policies]


@pytest.mark.parametrize(
    ("task", "code"),
    [
        ("Drop the flights with no delay.", "flights = flights.dropna(subset=['dep_delay'])"),
        ("Trie les vols par retard.", "flights = flights.sort_values('dep_delay')"),
        ("Ordena los vuelos por aerolínea.", "flights = flights.sort_values('carrier')"),
        ("只保留 AA 的航班", "flights = flights[flights['carrier'] == 'AA']"),
    ],
)
async def test_rebinding_a_given_name_when_asked_runs_in_any_language(runtime, task, code):
    events, model, _ = await run_turn(
        runtime, [fenced(f"{code}\nfinal_answer(len(flights))")], task
    )
    assert len(model.requests) == 1 and not _stopped(events)
    assert events[-1].content == str(len(await runtime.retrieve("flights")))


@pytest.mark.parametrize(
    "code",
    [
        "n = int((flights['dep_delay'] > 100).sum())\nfinal_answer(n)",
        "late = flights[flights['dep_delay'] > 100]\nfinal_answer(f'{len(late)} flights')",
        "share = float((flights['carrier'] == 'DL').mean())\nfinal_answer(share)",
        "none = [c for c in flights['carrier'] if c.startswith('Z')]\nfinal_answer(none)",
    ],
)
async def test_a_legitimate_zero_or_empty_answer_is_taken_at_once(runtime, code):
    events, model, _ = await run_turn(
        runtime, [fenced(code)], "How many flights left 100+ min late?"
    )
    assert len(model.requests) == 1 and not _stopped(events)


async def test_upstream_readme_hello_world_runs_as_written():
    def reverse(s: str) -> str:
        """Reverse a string."""
        return s[::-1]

    runtime = IPythonRuntime(
        functions=[Function(reverse)],
        variables=[Variable("secret", "!dlrow ,olleH", "A secret message")],
    )
    model = ScriptedModel(["```python\nsecret = reverse(secret)\n```", "Done: Hello, world!"])
    agent = CaveAgent(model, runtime, display=False)
    response = await agent.run("Reverse the secret")
    assert response.content == "Done: Hello, world!" and response.steps == 2
    assert await runtime.retrieve("secret") == "Hello, world!"
    assert set(response.interventions) <= {"keep_given"}  # told, never refused
    await runtime.stop()


async def test_a_resend_after_a_transient_error_costs_only_the_rerun(runtime):
    attempts: list[int] = []

    def load_prices() -> list[float]:
        """Prices from the pricing service (it drops the first connection)."""
        attempts.append(1)
        if len(attempts) == 1:
            raise ConnectionResetError("connection reset by peer")
        return [1.0, 2.0]

    runtime.inject(Function(load_prices))
    cell = fenced("prices = load_prices()\nfinal_answer(sum(prices))")
    events, model, _ = await run_turn(runtime, [cell, cell], "Total of the prices?")
    assert len(model.requests) == 2 and events[-1].content == "3.0"
    assert not _stopped(events)


async def test_multi_turn_work_builds_on_the_previous_turn(runtime):
    model = ScriptedModel(
        [
            fenced(
                "by_carrier = flights.groupby('carrier')['dep_delay'].mean()\nprint(by_carrier)"
            ),
            "AA averages 6.0 and UA 10.0.",
            fenced("worst = by_carrier.idxmax()\nfinal_answer(worst)"),
        ]
    )
    agent = CaveAgent(model, runtime, display=False)
    first = await agent.run("Mean delay per carrier, as `by_carrier`.")
    second = await agent.run("Which carrier is worst? Store it in `worst`.")
    assert (first.steps, second.steps) == (2, 1)
    assert second.content == "UA" and not first.interventions and not second.interventions


async def test_an_honest_report_of_a_failure_is_taken(runtime):
    model = ScriptedModel(
        [
            fenced("import pandas as pd\nsales = pd.read_csv('sales_2024.csv')"),
            fenced("final_answer('There is no sales_2024.csv here, so I cannot compute it.')"),
        ]
    )
    agent = CaveAgent(model, runtime, display=False)
    response = await agent.run("Load sales_2024.csv and sum the revenue.")
    assert response.steps == 2 and "sales_2024.csv" in response.content
    assert not {k for k in response.interventions if k != "error_hints"}


async def test_a_method_named_in_backticks_is_no_result_to_store(runtime):
    code = "counts = flights.groupby('carrier').size()\nfinal_answer(counts.to_dict())"
    events, model, _ = await run_turn(
        runtime, [fenced(code)], "Use `groupby` to count the flights per carrier; store `counts`."
    )
    assert len(model.requests) == 1 and not _stopped(events)


async def test_helpers_the_model_defines_and_frames_it_builds_are_not_questioned(runtime):
    code = (
        "def label(delay):\n    return 'late' if delay > 6 else 'ok'\n"
        "flights['label'] = flights['dep_delay'].map(label)\n"
        "table = flights.pivot_table(index='carrier', columns='label', aggfunc='size')\n"
        "final_answer(table.to_string())"
    )
    events, model, _ = await run_turn(runtime, [fenced(code)], "Label each flight late or ok.")
    assert len(model.requests) == 1 and not _stopped(events)
    assert isinstance(await runtime.retrieve("table"), pd.DataFrame)


@pytest.mark.parametrize(
    ("task", "code"),
    [
        (  # the backticked keys are parts of the result, not results
            "Store a dict `stats` with keys `count` and `total` for the flights.",
            "stats = {'count': len(flights), 'total': float(flights['dep_delay'].sum())}",
        ),
        (  # a parameter the request names
            "Write `late(df, threshold)` giving the flights over `threshold`; store the ones "
            "over 6 in `slow`.",
            "def late(df, threshold):\n    return df[df['dep_delay'] > threshold]\n"
            "slow = late(flights, 6)",
        ),
        (  # keyword names of a named aggregation
            "Build `per_carrier` with columns `n` and `worst` per carrier.",
            "per_carrier = flights.groupby('carrier').agg(n=('dep_delay', 'size'), "
            "worst=('dep_delay', 'max'))",
        ),
        (  # one type word for two results: neither is questioned on a guess
            "Store in `carriers` the list of carriers, and in `none` the flights of ZZ.",
            "carriers = sorted(flights['carrier'].unique())\n"
            "none = flights[flights['carrier'] == 'ZZ']",
        ),
        (  # an array is a list's fair answer
            "Store the list of distinct carriers in `distinct`.",
            "distinct = flights['carrier'].unique()",
        ),
    ],
)
async def test_results_with_named_parts_and_loose_types_are_taken_at_once(runtime, task, code):
    events, model, _ = await run_turn(runtime, [fenced(f"{code}\nfinal_answer('done')")], task)
    assert len(model.requests) == 1 and not _stopped(events)


def _flights_and_airlines() -> IPythonRuntime:
    flights = pd.DataFrame(
        {
            "carrier": ["UA", "AA", "UA", "DL", "UA"],
            "tailnum": ["N1", "N2", "N3", "N4", "N5"],
            "dep_delay": [5.0, 30.0, 2.0, 12.0, 0.0],
        }
    )
    airlines = pd.DataFrame(
        {"carrier": ["UA", "AA", "DL"], "name": ["United Air Lines", "American", "Delta"]}
    )
    return IPythonRuntime(variables=[Variable("flights", flights), Variable("airlines", airlines)])


@pytest.mark.parametrize(
    ("task", "replies"),
    [
        (  # the request asks for the code in `top`; the name only in the answer
            "Store the carrier code with the most flights in `top` and tell me the airline's "
            "full name.",
            [
                "top = flights['carrier'].value_counts().idxmax()\n"
                "final_answer(airlines.set_index('carrier').loc[top, 'name'])"
            ],
        ),
        (  # every plane flew once: counts of one are the truth
            "Count the flights per tail number; store the Series in `per_plane`.",
            ["per_plane = flights.groupby('tailnum').size()\nfinal_answer('done')"],
        ),
        (  # the data cannot give the result: said with final_answer after the error
            "Store the mean price per carrier in `prices`.",
            [
                "prices = flights.groupby('carrier')['price'].mean()",
                "final_answer('flights has no price column, so `prices` cannot be computed.')",
            ],
        ),
        (  # ... or said in plain text
            "Store the mean price per carrier in `prices`.",
            ["prices = flights.groupby('carrier')['price'].mean()", None],
        ),
    ],
)
async def test_codes_asked_for_true_ones_and_honest_reports_are_taken(task, replies):
    runtime = _flights_and_airlines()
    script = [
        fenced(code) if code else "There is no price column in flights; I cannot compute it."
        for code in replies
    ]
    events, model, _ = await run_turn(runtime, script, task)
    assert len(model.requests) == len(replies) and not _stopped(events)
    await runtime.stop()


@pytest.mark.parametrize(
    "code",
    [
        "flights = flights.dropna(subset=['dep_delay'])\nfinal_answer(len(flights))",
        "late = flights[flights['dep_delay'] > 6]\nfinal_answer(f'{len(late)} late flights')",
        "final_answer(0)",
    ],
)
async def test_replies_begun_in_code_cost_a_capable_model_nothing(runtime, code):
    """`small` forced on a capable model whose server continues replies: the reply is begun
    with the fence, and a model that writes the fence itself (the lead sent back) is read
    once. One call, the answer as computed, no refusal, doubt or rewind."""
    model = ScriptedModel([fenced(code)])
    model.continues_reply = True
    agent = CaveAgent(model, runtime, display=False, policies="small")
    events = [e async for e in agent.stream_events("Do as the code says.")]
    assert len(model.requests) == 1 and not _stopped(events)
    assert ("reply_in_code", InterventionKind.LEAD) in interventions(events)
    assert [e.content for e in events if isinstance(e, ev.FinalResponseEvent)] == [
        events[-1].content
    ]
    replies = [m["content"] for m in agent.history if m["role"] == "assistant"]
    assert replies[0].count("```python") == 1


@pytest.mark.parametrize(
    ("task", "code"),
    [
        (
            "What percentage of flights left late? Answer format: @late_pct[value]",
            "pct = round((flights['dep_delay'] > 6).mean() * 100, 2)\n"
            "final_answer(f'@late_pct[{pct}]')",
        ),
        ("Which carrier flew most? Answer format: @carrier[name]", "final_answer('@carrier[AA]')"),
        (
            "Mean delay? Answer format: @mean[value]",
            "m = flights['dep_delay'].mean()\nfinal_answer(f'@mean[{m:.2f}]')",
        ),
        (  # two fields, a name of several words, a test's result kept whole
            "Which carrier, and is its mean delay above 6? Answer format: @carrier[name], "
            "@above[yes or no]",
            "from scipy.stats import ttest_1samp\n"
            "res = ttest_1samp(flights['dep_delay'], 6)\n"
            "name = 'American Airlines' if flights['carrier'].mode()[0] == 'AA' else 'other'\n"
            "final_answer(f\"@carrier[{name}], @above[{'yes' if res.statistic > 0 else 'no'}]\")",
        ),
    ],
)
async def test_the_answer_form_aids_cost_correct_work_nothing_even_in_small(runtime, task, code):
    """`small` forced on a capable model: an answer in the asked form, formatted, scaled to a
    percentage where one is asked, is taken at once (answer_format and its form_call,
    unformatted_answer, fraction_for_percent, missing_answer)."""
    events, model, _ = await run_turn(runtime, [fenced(code)], task, policies="small")
    assert len(model.requests) == 1 and not _stopped(events)
