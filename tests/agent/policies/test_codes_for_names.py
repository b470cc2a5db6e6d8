"""CodesForNames: codes given where the request asks for names."""

from cave_tui.agent import CaveAgent
from cave_tui.agent.policies.codes_for_names import CodedResult, coded_results, codes_note
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Variable
from cave_tui.runtime.shipped import links
from cave_tui.runtime.shipped.summary import Codes, summarize
from tests.agent.policies.frames import AIRLINES, AIRPORTS, FLIGHTS


def test_codes_where_the_request_names_another_column_of_the_lookup_frame():
    ns = {"airports": AIRPORTS, "top": ["ORD", "ATL"], "by_dest": FLIGHTS.groupby("dest").size()}
    rows = [summarize(name, obj) for name, obj in ns.items()]
    links.annotate(ns, rows)
    ask = "Store the full names of the two top airports in `top`."
    assert coded_results(["top"], rows, ask, stored={"top"}) == [
        CodedResult("top", Codes("airports", "faa", "values"), "name", "", "list")
    ]
    assert coded_results(["top"], rows, ask, stored=set()) == []  # not stored this turn
    assert coded_results(["top"], rows, "Store the codes in `top`.", stored={"top"}) == []
    ask = "Count the flights by tzone into `by_dest`."
    (item,) = coded_results(["by_dest"], rows, ask, stored={"by_dest"})
    in_index = Codes("airports", "faa", "index", "dest")
    assert item == CodedResult("by_dest", in_index, "tzone", "", "Series")
    note = codes_note(item)
    assert note.startswith("`by_dest` is indexed by airports.faa codes, but the request asks")
    assert "Merge the frames on the linked columns first, then group by 'tzone'" in note
    # With the frame the codes came from in the namespace, the note gives the merge.
    ns = {"flights": FLIGHTS, **ns}
    rows = [summarize(name, obj) for name, obj in ns.items()]
    links.annotate(ns, rows)
    (item,) = coded_results(["by_dest"], rows, ask, stored={"by_dest"})
    assert item.facts == "flights"
    assert (
        "Merge first: merged = flights.merge(airports, left_on='dest', right_on='faa'), "
        "then group merged by 'tzone'. Store that in `by_dest`, then call final_answer."
    ) in codes_note(item)


async def test_codes_given_for_names_are_questioned_once(runtime):
    runtime.inject(Variable("airlines", AIRLINES))
    codes = "```python\nbusiest = flights['carrier'].mode()[0]\nfinal_answer(busiest)\n```"
    names = (
        "```python\nbusiest = airlines.set_index('carrier')['name'][busiest]\n"
        "final_answer(busiest)\n```"
    )
    model = ScriptedModel([codes, names])
    response = await CaveAgent(model, runtime).run(
        "Store the full name of the busiest airline in `busiest`."
    )
    assert response.content == "American" and await runtime.retrieve("busiest") == "American"
    assert "`busiest` holds airlines.carrier codes" in model.requests[1][-1]["content"]
    # A second answer in codes is taken as it is: the check asks once per turn.
    model = ScriptedModel([codes, codes])
    response = await CaveAgent(model, runtime).run("Store the airline's name in `busiest`.")
    assert response.content == "AA" and response.steps == 2


def test_an_index_of_codes_where_names_are_asked_is_relabelled_not_merged():
    codes = Codes("airlines", "carrier", "index", "carrier")
    item = CodedResult("late_by_airline", codes, "name", "flights")
    assert "Relabel it: late_by_airline = late_by_airline.rename(index=airlines.set_index(" in (
        codes_note(item)
    )


def test_codes_in_a_value_get_the_exact_line_that_looks_them_up():
    def note(type_name: str) -> str:
        return codes_note(CodedResult("x", Codes("airports", "faa"), "name", "", type_name))

    lookup = "airports.set_index('faa')['name']"
    assert f"Look it up: x = {lookup}[x]." in note("str")
    assert f"Look them up: x = [{lookup}[c] for c in x]." in note("list")
    assert f"Look them up: x = x.map({lookup})." in note("Series")
