"""Every save keeps what the object holds: each format `save_object` writes, for each kind of
table (default row numbers, a named index, a group-by's keys, MultiIndex columns, labels that
are not strings), saved then loaded back with cave's own loader; what a format cannot hold is
refused with the reason, or stated in the save's note."""

from __future__ import annotations

import asyncio

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from cave_tui.dataio import DataIOError, dump_namespace, load_file, save_object
from cave_tui.dataio.save import SERIES_COLUMN, WRITERS
from cave_tui.runtime import IPythonRuntime, Variable
from tests.reliability.real_cave import cave

FLIGHTS = pd.DataFrame(
    {
        "carrier": ["AA", "UA", "AA", "DL", "UA"],
        "origin": ["JFK", "JFK", "LGA", "LGA", "LGA"],
        "dep_delay": [5.0, 10.0, 7.0, 1.0, np.nan],
        "flights": [3, 4, 5, 6, 7],
    }
)
TABLES = {
    "range-index": FLIGHTS,
    "mean-per-airline": FLIGHTS.groupby("carrier").dep_delay.mean(),
    "two-key-group-by": FLIGHTS.groupby(["origin", "carrier"]).dep_delay.mean(),
    "frame-group-by": FLIGHTS.groupby(["origin", "carrier"]).agg(
        mean=("dep_delay", "mean"), n=("flights", "sum")
    ),
    "unnamed-string-index": pd.Series([1.5, 2.5], index=["a", "b"]),
    "unnamed-series": pd.Series([1.5, 2.5, 3.5]),
    "named-series": pd.Series([1, 2], name="n"),
    "filtered-rows": FLIGHTS[FLIGHTS.flights > 4],  # an unnamed index that is not 0..n-1
    "pivot": FLIGHTS.pivot_table(index="origin", columns="carrier", values="flights"),
    "int-labels": pd.DataFrame(np.arange(6).reshape(3, 2)),
    "multiindex-columns": FLIGHTS.groupby("origin").agg({"dep_delay": ["mean", "max"]}),
}
TEXT = {"csv": ",", "tsv": "\t", "json": None, "jsonl": None}


def _flat(obj) -> pd.DataFrame:
    """What a text format must hold of *obj*: its index as leading columns (unless it is the
    default row numbers), its values, column labels as text."""
    frame = obj.to_frame("value" if obj.name is None else obj.name) if obj.ndim == 1 else obj
    index = frame.index
    default = isinstance(index, pd.RangeIndex) and index.start == 0 and index.name is None
    frame = frame if default else frame.reset_index()
    frame = frame.copy()
    frame.columns = [str(c) for c in frame.columns]
    return frame


def _as_frame(value) -> pd.DataFrame:
    return value if isinstance(value, pd.DataFrame) else pd.DataFrame.from_records(value)


@pytest.mark.parametrize("fmt", list(TEXT))
@pytest.mark.parametrize("kind", list(TABLES))
def test_text_formats_keep_the_index_and_the_keys(kind, fmt, tmp_path):
    obj = TABLES[kind]
    path = tmp_path / f"{kind}.{fmt}"
    if kind == "multiindex-columns":
        with pytest.raises(DataIOError, match="MultiIndex columns") as refused:
            save_object(obj, path)
        assert "flatten them first" in str(refused.value)
        assert not path.exists() and list(tmp_path.iterdir()) == []  # nothing half-written
        return
    saved = save_object(obj, path)
    got = _as_frame(load_file(saved.path).value)
    pd.testing.assert_frame_equal(got, _flat(obj), check_dtype=False)
    if kind in ("mean-per-airline", "two-key-group-by", "frame-group-by"):
        keys = list(obj.index.names)
        assert saved.restore["index"] == keys
        assert f"the index is written as the column(s) {', '.join(keys)}" in saved.note
    if kind == "range-index":
        assert "index" not in saved.restore and saved.note == ""
    if kind == "int-labels":
        assert "written as text" in saved.note
    if kind == "pivot":
        assert "column axis name 'carrier' is not kept" in saved.note


def test_the_airline_names_are_in_the_csv(tmp_path):
    """The issue's case, read as text: a mean per airline holds the airlines."""
    saved = save_object(TABLES["mean-per-airline"], tmp_path / "means.csv")
    assert saved.path.read_text().splitlines() == [
        "carrier,dep_delay",
        "AA,6.0",
        "DL,1.0",
        "UA,10.0",
    ]


def test_an_index_name_that_is_also_a_column_is_refused(tmp_path):
    frame = FLIGHTS.set_index("carrier", drop=False)
    for fmt in TEXT:
        for obj in (frame, pa.Table.from_pandas(frame)):
            with pytest.raises(DataIOError, match=r"index .*carrier.* cannot be written as"):
                save_object(obj, tmp_path / f"clash.{fmt}")
    assert list(tmp_path.iterdir()) == []


def test_arrow_tables_are_written_with_their_pandas_index(tmp_path):
    table = pa.Table.from_pandas(TABLES["mean-per-airline"].to_frame())
    for fmt in TEXT:
        saved = save_object(table, tmp_path / f"t.{fmt}")
        got = _as_frame(load_file(saved.path).value)
        pd.testing.assert_frame_equal(got, _flat(TABLES["mean-per-airline"]), check_dtype=False)
    saved = save_object(table, tmp_path / "t.parquet")
    assert saved.restore == {"as": "arrow"}
    pd.testing.assert_frame_equal(
        load_file(saved.path).value, TABLES["mean-per-airline"].to_frame()
    )


def test_a_table_without_columns_is_refused_by_text_formats(tmp_path):
    for fmt in TEXT:
        with pytest.raises(DataIOError, match="has no columns"):
            save_object(pd.DataFrame(index=range(3)), tmp_path / f"empty.{fmt}")
    saved = save_object(pd.DataFrame({"a": []}), tmp_path / "no-rows.csv")  # columns, no rows
    assert list(load_file(saved.path).value.columns) == ["a"]


def test_duplicate_column_names_are_refused_by_text_formats(tmp_path):
    frame = pd.DataFrame([[1, 2]], columns=["a", "a"])
    for fmt in TEXT:
        with pytest.raises(DataIOError, match="a occur more than once"):
            save_object(frame, tmp_path / f"dupes.{fmt}")


@pytest.mark.parametrize("fmt", ["parquet", "feather"])
@pytest.mark.parametrize("kind", list(TABLES))
def test_arrow_formats_keep_the_index_exactly(kind, fmt, tmp_path):
    obj = TABLES[kind]
    path = tmp_path / f"{kind}.{fmt}"
    if kind in ("int-labels", "multiindex-columns"):
        with pytest.raises(DataIOError, match=r"non-string column names|MultiIndex columns"):
            save_object(obj, path)
        assert list(tmp_path.iterdir()) == []
        return
    saved = save_object(obj, path)
    expected = obj.to_frame(obj.name or SERIES_COLUMN) if obj.ndim == 1 else obj
    pd.testing.assert_frame_equal(load_file(saved.path).value, expected)
    if obj.ndim == 1:
        assert saved.restore == {"as": "series", "name": obj.name}


@pytest.mark.parametrize("fmt", ["pickle", "dill"])
@pytest.mark.parametrize("kind", list(TABLES))
def test_pickles_keep_everything(kind, fmt, tmp_path):
    obj = TABLES[kind]
    saved = save_object(obj, tmp_path / f"{kind}.{'pkl' if fmt == 'pickle' else 'dill'}")
    got = load_file(saved.path, trust=True).value
    if obj.ndim == 1:
        pd.testing.assert_series_equal(got, obj)
    else:
        pd.testing.assert_frame_equal(got, obj)


def test_arrays_and_plain_data_round_trip(tmp_path):
    array = np.arange(12, dtype="float32").reshape(3, 4)
    fortran = np.asfortranarray(array)
    for name, obj in {"a.npy": array, "f.npy": fortran}.items():
        got = load_file(save_object(obj, tmp_path / name).path).value
        np.testing.assert_array_equal(got, obj)
        assert got.dtype == obj.dtype
    arrays = {"x": array, "y": np.array([1, 2, 3])}
    got = load_file(save_object(arrays, tmp_path / "b.npz").path).value
    assert got.keys() == arrays.keys()
    for key, value in arrays.items():
        np.testing.assert_array_equal(got[key], value)
    data = {"a": [1, 2.5, None], "b": {"c": "é"}}
    assert load_file(save_object(data, tmp_path / "d.json").path).value == data
    records = [{"a": 1}, {"a": 2}]
    got = load_file(save_object(records, tmp_path / "r.jsonl").path).value
    pd.testing.assert_frame_equal(got, pd.DataFrame(records))


def test_every_format_that_is_written_is_covered():
    """A new writer needs its round trip here."""
    assert set(WRITERS) == {*TEXT, "parquet", "feather", "pickle", "dill", "npy", "npz", "excel"}


@pytest.mark.parametrize("kind", list(TABLES))
def test_excel_keeps_the_index_and_the_keys(kind, tmp_path):
    """Issue 31: `.xlsx` was refused; a sheet is written flat like a text format."""
    obj = TABLES[kind]
    path = tmp_path / f"{kind}.xlsx"
    if kind == "multiindex-columns":
        with pytest.raises(DataIOError, match="MultiIndex columns"):
            save_object(obj, path)
        assert list(tmp_path.iterdir()) == []  # nothing half-written
        return
    saved = save_object(obj, path)
    assert saved.format == "excel"
    got = _as_frame(load_file(saved.path).value)
    expected = _flat(obj)
    if kind == "int-labels":  # Excel keeps the header cells as numbers
        got.columns = got.columns.astype(str)
    pd.testing.assert_frame_equal(got, expected, check_dtype=False)
    if kind in ("mean-per-airline", "two-key-group-by", "frame-group-by"):
        assert saved.restore["index"] == list(obj.index.names)


def test_retrieve_through_cave_run_keeps_both_keys(tmp_path):
    """Where it was seen: `cave run --load DUMP "/retrieve NAME NAME.csv"` on the default
    kernel, the dump holding a two-key group-by (the keys travel through the dump, the
    kernel's transport and the save)."""

    async def make_dump() -> None:
        runtime = IPythonRuntime(variables=[Variable("flights", FLIGHTS, "flights")])
        await runtime.start()
        try:
            await runtime.execute("two = flights.groupby(['origin', 'carrier']).dep_delay.mean()")
            await dump_namespace(runtime, tmp_path / "d")
        finally:
            await runtime.stop()

    asyncio.run(make_dump())
    result = cave(
        "run", "/retrieve two two.csv", "--load", "d", "--sessions-dir", "s", "--kernel",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = " ".join(result.stdout.split())  # the console wraps long lines
    assert "the index is written as the column(s) origin, carrier" in said
    assert (tmp_path / "two.csv").read_text().splitlines() == [
        "origin,carrier,dep_delay",
        "JFK,AA,5.0",
        "JFK,UA,10.0",
        "LGA,AA,7.0",
        "LGA,DL,1.0",
        "LGA,UA,",
    ]
