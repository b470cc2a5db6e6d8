import json
import time

import numpy as np
import pandas as pd

from cave_tui.agent.prompt import COLUMNS_BUDGET, describe_namespace
from cave_tui.runtime.shipped.summary import (
    MORE_NAMES,
    NAME_CHARS,
    Codes,
    Column,
    Link,
    Relations,
    VarInfo,
    bounded_repr,
    summarize,
    summarize_namespace,
)


class Explodes:
    def __repr__(self):
        raise RuntimeError("no")


def test_bounded_repr_of_huge_list_is_cheap():
    big = list(range(5_000_000))
    started = time.perf_counter()
    text = bounded_repr(big, 80)
    assert time.perf_counter() - started < 0.05
    assert text.startswith("[0, 1, 2") and len(text) <= 80


def test_bounded_repr_of_huge_string_and_dict():
    assert len(bounded_repr("x" * 10_000_000, 50)) <= 50
    assert len(bounded_repr({i: "v" * 1000 for i in range(100_000)}, 60)) <= 60


def test_broken_repr_does_not_raise():
    assert "repr failed" in bounded_repr(Explodes())


def test_frame_summary_has_shape_columns_dtypes():
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", "y", "z"]})
    info = summarize("df", df, "sales")
    assert info.shape == (3, 2) and info.length is None and info.shape_text() == "3x2"
    assert info.columns[0] == Column("a", "int64")
    assert info.columns[1].name == "b" and info.columns[1].dtype in ("object", "str")
    assert info.columns_text().startswith("a:int64, b:")
    assert info.size_bytes and info.size_bytes > 0
    assert "first row" in info.preview


def test_wide_frame_columns_are_capped():
    df = pd.DataFrame({f"c{i}": [i] for i in range(200)})
    info = summarize("wide", df)
    assert len(info.columns) == 24 and info.more_columns == 176
    assert info.columns_text().endswith("c22:int64, c23:int64, … +176 more")
    assert info.column_names_text().endswith("c22, c23, … +176 more")


def test_a_wide_frame_names_its_columns_past_those_with_a_dtype():
    df = pd.DataFrame({f"c{i}": [i] for i in range(30)} | {"x" * 100: [0]})
    info = summarize("wide", df)
    assert info.more_names == [f"c{i}" for i in range(24, 30)] + ["x" * NAME_CHARS]
    assert info.column_names() == [f"c{i}" for i in range(30)] + ["x" * NAME_CHARS]
    huge = summarize("huge", pd.DataFrame({f"c{i}": [i] for i in range(5000)}))
    assert len(huge.more_names) == MORE_NAMES and huge.more_columns == 5000 - 24
    assert VarInfo.from_dict(json.loads(json.dumps(huge.to_dict()))).more_names == huge.more_names
    # What a kernel sends beyond those bounds (its code rewritten by a cell) is cut on the host.
    sent = huge.to_dict() | {"more_names": ["y" * 10_000] * 100_000}
    back = VarInfo.from_dict(sent)
    assert len(back.more_names) == MORE_NAMES and {len(n) for n in back.more_names} == {NAME_CHARS}


def test_the_model_sees_every_column_of_a_wide_frame_by_name():
    cols = [f"{part}_{stat}" for stat in ("mean", "se", "worst") for part in
            ("radius", "texture", "perimeter", "area", "smoothness", "compactness",
             "concavity", "points", "symmetry", "fractal")] + ["malignant"]  # fmt: skip
    text = describe_namespace([summarize("cancer", pd.DataFrame({c: [1.0] for c in cols}))])
    line = next(x for x in text.splitlines() if x.startswith("  columns: "))
    assert line == "  columns: " + ", ".join(cols)  # all 31, names only
    # A narrow frame keeps its dtypes; one too wide for the budget says how many are left.
    narrow = describe_namespace([summarize("s", pd.DataFrame({"a": [1], "b": [1.5]}))])
    assert "  columns: a:int, b:float" in narrow.splitlines()
    words = [f"col_{a}{b}" for a in "abcdefghijklmnopqrst" for b in "abcdefghijklmno"]  # 300
    huge = describe_namespace([summarize("h", pd.DataFrame({w: [1] for w in words}))])
    line = next(x for x in huge.splitlines() if x.startswith("  columns: "))
    listed = line.removeprefix("  columns: ").split(", ")
    assert listed[:3] == ["col_aa", "col_ab", "col_ac"] and len(listed) > 100
    assert listed[-1] == f"… +{300 - (len(listed) - 1)} more" and len(line) <= COLUMNS_BUDGET


def test_array_and_series():
    arr = np.arange(1_000_000).reshape(1000, 1000)
    info = summarize("arr", arr)
    assert info.shape == (1000, 1000) and info.dtype == "int64" and info.columns == []
    s = summarize("s", pd.Series(range(10), name="n"))
    assert s.shape == (10,) and s.shape_text() == "10" and s.dtype == "int64" and not s.columns
    assert s.shape_text(one_dim_as_length=True) == "len 10"  # as the prompt says it


def test_shape_and_length_read_as_before():
    assert summarize("x", np.float64(1.5)).shape == ()
    assert summarize("x", np.float64(1.5)).shape_text() == "scalar"
    items = summarize("items", [1, 2, 3, 4])
    assert (items.shape, items.length, items.shape_text()) == (None, 4, "len 4")
    assert summarize("d", {"k": 1}).shape_text(one_dim_as_length=True) == "len 1"
    nothing = summarize("o", object())
    assert (nothing.shape, nothing.length, nothing.shape_text()) == (None, None, "")


def test_namespace_hides_private_and_ipython_names():
    ns = {"_x": 1, "In": [], "Out": {}, "get_ipython": print, "visible": 2}
    names = [r.name for r in summarize_namespace(ns)]
    assert names == ["visible"]


def test_description_budget_holds_with_many_variables():
    ns = {f"v{i}": list(range(i)) for i in range(2000)}
    text = describe_namespace(summarize_namespace(ns), budget=3000)
    assert len(text) <= 3100
    assert "more names not shown" in text


def test_description_lists_functions_types_variables():
    from dataclasses import dataclass

    @dataclass
    class Point:
        x: float
        y: float

    def dist(p: Point) -> float:
        """Distance from the origin."""
        return (p.x**2 + p.y**2) ** 0.5

    ns = {"Point": Point, "dist": dist, "pts": [Point(1, 2)]}
    text = describe_namespace(summarize_namespace(ns))
    assert "dist(p:" in text and "Distance from the origin" in text
    assert "dataclass fields: x: float, y: float" in text
    assert "pts: list len 1" in text


def test_describable_without_user_code():
    from cave_tui.runtime.shipped.summary import describable_without_user_code

    class Mine:
        pass

    assert describable_without_user_code(pd.DataFrame({"a": [1]}))
    assert describable_without_user_code({"k": [1, (2, "x")]})
    assert describable_without_user_code(Mine)  # a plain class is described by inspect
    assert not describable_without_user_code(Mine())
    assert not describable_without_user_code([1, [Mine()]])
    assert not describable_without_user_code({"k": Mine()})


def test_numpy_scalars_preview_as_numbers():
    assert bounded_repr(np.float64(7.25)) == "7.25"
    info = summarize("df", pd.DataFrame({"a": [1], "b": ["x"]}))
    assert info.preview == "first row: a=1, b='x'"


def test_is_empty_is_decided_from_the_object_not_its_preview():
    empty = {
        "zero": 0,
        "zero_f": 0.0,
        "nan": float("nan"),
        "none": None,
        "np_zero": np.float64(0.0),
        "np_nan": np.float32("nan"),
        "frame": pd.DataFrame({"a": []}),
        "no_columns": pd.DataFrame(index=[1, 2]),
        "series": pd.Series([], dtype=float),
        "array": np.zeros((3, 0)),
        "index": pd.Index([]),
        "lst": [],
        "dct": {},
        "st": set(),
        "tup": (),
        "text": "",
    }
    full = {
        "one": 1,
        "false": False,  # a bool is an answer, not an empty count
        "zero_text": "0",
        "zeros": [0],
        "frame": pd.DataFrame({"a": [0]}),
        "np_one": np.int64(1),
        "array": np.zeros(3),
        "obj": object(),
        "func": len,
        "cls": int,
    }
    assert [n for n, v in empty.items() if not summarize(n, v).is_empty] == []
    assert [n for n, v in full.items() if summarize(n, v).is_empty] == []


def test_rows_round_trip_through_json_exactly():
    from cave_tui.runtime.shipped import links

    ns = {
        "frame": pd.DataFrame({"faa": ["JFK", "LGA"], "name": ["a", "b"]}),
        "wide": pd.DataFrame({f"c{i}": [i] for i in range(30)}),
        "codes": ["JFK", "LGA", "JFK"],
        "s": pd.Series([1.5, 2.5]),
        "arr": np.zeros((2, 3)),
        "x": np.float64(0.0),
        "d": {"k": 1},
        "none": None,
        "f": bounded_repr,
        "T": Explodes,
        "np": np,
    }
    rows = summarize_namespace(ns)
    links.annotate(ns, rows)
    assert rows[2].relations.codes is not None  # codes of frame.faa
    for row in rows:
        back = VarInfo.from_dict(json.loads(json.dumps(row.to_dict())))
        assert back == row and type(back.shape) is type(row.shape)


def test_rows_in_the_old_string_form_still_load():
    """What the summary code of an earlier cave, still running in an attached kernel, sends."""
    old = [
        {"name": "flights", "kind": "variable", "type_name": "DataFrame", "shape": "6x3",
         "columns": ["origin:object", "dest:object", "distance:int64"],
         "levels": ["origin: EWR, JFK, LGA"],
         "links": ["origin→airports.faa", "dest→airports.faa"], "preview": "first row: …"},
        {"name": "wide", "kind": "variable", "type_name": "DataFrame", "shape": "1x30",
         "columns": ["c0:int64", "… +29 more"], "preview": "first row: c0=0"},
        {"name": "airports", "kind": "variable", "type_name": "DataFrame", "shape": "0x2",
         "columns": ["faa:object", "name:object"], "key": "faa", "preview": "(empty)"},
        {"name": "by_dest", "kind": "variable", "type_name": "Series", "shape": "3",
         "columns": ["None:int64"], "codes": "airports.faa", "codes_in": "index",
         "codes_from": "dest", "preview": "[1, 2, 3]"},
        {"name": "x", "kind": "variable", "type_name": "float64", "shape": "scalar",
         "columns": ["dtype:float64"], "preview": "0.0"},
        {"name": "top", "kind": "variable", "type_name": "list", "shape": "len 0",
         "preview": "[]", "codes": "", "codes_in": "", "codes_from": "", "links": []},
        {"name": "f", "kind": "function", "type_name": "function", "shape": "",
         "signature": "f()", "unknown_field": 1},
    ]  # fmt: skip
    rows = {row.name: row for row in map(VarInfo.from_dict, old)}
    flights = rows["flights"]
    assert (flights.shape, flights.length) == ((6, 3), None)
    assert flights.columns == [Column("origin", "object"), Column("dest", "object"),
                               Column("distance", "int64")]  # fmt: skip
    assert flights.levels == {"origin": ["EWR", "JFK", "LGA"]}
    assert flights.relations == Relations(
        links=[Link("origin", "airports", "faa"), Link("dest", "airports", "faa")]
    )
    assert (rows["wide"].columns, rows["wide"].more_columns) == ([Column("c0", "int64")], 29)
    assert rows["airports"].relations.key == "faa" and rows["airports"].is_empty
    assert rows["by_dest"].relations.codes == Codes("airports", "faa", "index", "dest")
    assert (rows["by_dest"].shape, rows["by_dest"].dtype, rows["by_dest"].columns) == (
        (3,),
        "int64",
        [],
    )
    assert (rows["x"].shape, rows["x"].dtype, rows["x"].is_empty) == ((), "float64", True)
    assert (rows["top"].length, rows["top"].relations, rows["top"].is_empty) == (
        0,
        Relations(),
        True,
    )
    assert (rows["f"].shape, rows["f"].is_empty, rows["f"].signature) == (None, False, "f()")
    assert flights.shape_text() == "6x3" and rows["top"].shape_text() == "len 0"


def test_a_new_frame_at_a_freed_frames_address_gets_its_own_relations():
    """The relation caches are by id and shape; a reused id must not hand over old answers."""
    from cave_tui.runtime.shipped.links import frame_key

    for _ in range(200):
        old = pd.DataFrame({"dest": ["ORD", "LGA", "ORD"], "n": [1, 2, 3]})
        assert frame_key(old) is None  # `dest` repeats: no key (and the answer is cached)
        address = id(old)
        del old
        new = pd.DataFrame({"faa": ["JFK", "LGA", "ORD"], "n": [1, 2, 3]})
        if id(new) == address:
            break
    else:
        raise AssertionError("CPython never reused the address: the test proves nothing")
    assert frame_key(new) == "faa"
