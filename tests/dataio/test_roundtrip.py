"""Every format round-trips: written by its usual library, injected, retrieved, saved, reloaded."""

from __future__ import annotations

import json
import pickle

import dill
import numpy as np
import pandas as pd
import pytest

from cave_tui.dataio import (
    dump_namespace,
    file_sha256,
    inject_file,
    load_dump,
    load_file,
    preferred_format,
    save_object,
)
from cave_tui.runtime.items import Variable
from tests.dataio.conftest import RUNTIMES, make_runtime

pytestmark = pytest.mark.asyncio(loop_scope="module")


def _same(a, b) -> None:
    if isinstance(a, pd.DataFrame):
        pd.testing.assert_frame_equal(a, b)
    elif isinstance(a, np.ndarray):
        np.testing.assert_array_equal(a, b)
        assert a.dtype == b.dtype
    elif isinstance(a, dict) and a and all(isinstance(v, np.ndarray) for v in a.values()):
        assert a.keys() == b.keys()
        for key in a:
            np.testing.assert_array_equal(a[key], b[key])
    else:
        assert a == b


def _frame_for_text(frame: pd.DataFrame) -> pd.DataFrame:
    """What a text format gives back: dates as strings, like pandas itself reads them."""
    out = frame.copy()
    out["when"] = out["when"].dt.strftime("%Y-%m-%d")
    return out


CASES = {
    "parquet": ("f.parquet", lambda df, p: df.to_parquet(p), lambda df: df),
    "feather": ("f.feather", lambda df, p: df.to_feather(p), lambda df: df),
    "arrow-ipc": ("f.arrow", lambda df, p: df.to_feather(p, compression="uncompressed"), None),
    "csv": ("f.csv", lambda df, p: _frame_for_text(df).to_csv(p, index=False), _frame_for_text),
    "tsv": (
        "f.tsv",
        lambda df, p: _frame_for_text(df).to_csv(p, sep="\t", index=False),
        _frame_for_text,
    ),
    "csv.gz": (
        "f.csv.gz",
        lambda df, p: _frame_for_text(df).to_csv(p, index=False, compression="gzip"),
        _frame_for_text,
    ),
    "jsonl": (
        "f.jsonl",
        lambda df, p: p.write_text(
            "".join(json.dumps(r) + "\n" for r in _frame_for_text(df).to_dict("records"))
        ),
        _frame_for_text,
    ),
}


@pytest.mark.parametrize("case", list(CASES))
async def test_frame_formats_round_trip(case, any_runtime, frame, tmp_path):
    filename, write, expect = CASES[case]
    path = tmp_path / filename
    write(frame, path)
    expected = (expect or (lambda df: df))(frame)
    name = "v_" + case.replace("-", "_").replace(".", "_")
    injection = await inject_file(any_runtime, path, name)
    assert injection.sha256() == file_sha256(path)  # finished in the background
    assert injection.source["format"] in ("parquet", "feather", "csv", "tsv", "jsonl")
    got = await any_runtime.retrieve(name)
    if case == "jsonl":
        got = got.astype({"id": "int64"})
    pd.testing.assert_frame_equal(got, expected, check_dtype=case not in ("jsonl",))
    saved = save_object(got, tmp_path / f"back_{name}")
    assert saved.format == "parquet" and saved.path.suffix == ".parquet"
    pd.testing.assert_frame_equal(load_file(saved.path).value, got)


OBJECT_CASES = {
    "json": ("d.json", {"a": [1, 2.5, None], "b": {"c": "é"}}, "json"),
    "npy": ("a.npy", np.arange(24, dtype="float32").reshape(2, 3, 4), "npy"),
    "npy-fortran": ("af.npy", np.asfortranarray(np.arange(12).reshape(3, 4)), "npy"),
    "npz": ("z.npz", {"a": np.arange(3), "b": np.eye(2)}, None),
    "pickle": ("o.pkl", {"s": {1, 2}, "t": (1, "x")}, "pickle"),
    "dill": ("o.dill", {"f": None}, None),
}


def _write_object(case: str, path, value) -> None:
    if case == "json":
        path.write_text(json.dumps(value))
    elif case.startswith("npy"):
        np.save(path, value)
    elif case == "npz":
        np.savez(path, **value)
    elif case == "pickle":
        path.write_bytes(pickle.dumps(value))
    elif case == "dill":
        path.write_bytes(dill.dumps(value))


@pytest.mark.parametrize("case", list(OBJECT_CASES))
async def test_object_formats_round_trip(case, any_runtime, tmp_path):
    filename, value, saved_as = OBJECT_CASES[case]
    path = tmp_path / filename
    _write_object(case, path, value)
    name = "o_" + case.replace("-", "_")
    await inject_file(any_runtime, path, name, trust=case in ("pickle", "dill"))
    got = await any_runtime.retrieve(name)
    _same(value, got)
    if saved_as:
        assert preferred_format(got) == saved_as
        saved = save_object(got, tmp_path / f"back_{name}")
        assert saved.format == saved_as
        _same(value, load_file(saved.path, trust=True).value)


async def test_excel_round_trip(any_runtime, frame, tmp_path):
    pytest.importorskip("openpyxl")
    path = tmp_path / "book.xlsx"
    with pd.ExcelWriter(path) as writer:
        frame.to_excel(writer, sheet_name="one", index=False)
        frame.head(2).to_excel(writer, sheet_name="two", index=False)
    await inject_file(any_runtime, path, "book")
    got = await any_runtime.retrieve("book")
    assert list(got) == ["one", "two"]
    pd.testing.assert_frame_equal(got["one"], frame, check_dtype=False)


async def test_explicit_formats_on_save(frame, tmp_path):
    for ext, fmt in [(".csv", "csv"), (".feather", "feather"), (".jsonl", "jsonl")]:
        saved = save_object(frame, tmp_path / f"out{ext}")
        assert saved.format == fmt and saved.path.name == f"out{ext}"
        assert len(load_file(saved.path).value) == len(frame)


@pytest.mark.parametrize("kind", RUNTIMES)
async def test_dump_and_load_round_trip_on_each_runtime(kind, frame, tmp_path):
    source = make_runtime(kind)
    target = make_runtime(kind)
    await source.start()
    await target.start()
    try:
        source.inject(Variable("df", frame))
        result = await source.execute(
            "import numpy as np\n"
            "series = df['x'].rename('xs')\n"
            "arr = np.arange(10).reshape(2, 5)\n"
            "meta = {'rows': 6, 'tags': ['a', 'b']}\n"
            "pair = (1, 2)\n"
            "def double(v):\n    return 2 * v\n"
            "gen = (i for i in range(3))\n"
        )
        assert result.success, result.error_text
        dump = await dump_namespace(source, tmp_path / "dump")
        manifest = json.loads((tmp_path / "dump" / "manifest.json").read_text())
        entries = {e["name"]: e for e in manifest["variables"]}
        assert entries["df"]["format"] == "parquet"
        assert entries["series"]["format"] == "parquet"
        assert entries["arr"]["format"] == "npy"
        assert entries["meta"]["format"] == "json"
        assert entries["pair"]["format"] == "pickle"
        for entry in entries.values():
            assert {"name", "type", "format", "bytes", "sha256", "file"} <= set(entry)
            assert (tmp_path / "dump" / entry["file"]).stat().st_size == entry["bytes"]
        assert {"name": "np", "module": "numpy"} in manifest["modules"]
        skipped = {s["name"]: s["reason"] for s in manifest["skipped"]}
        assert "gen" in skipped and "generator" in skipped["gen"]
        assert dump.skipped == manifest["skipped"]

        loaded = await load_dump(target, tmp_path / "dump", trust=True)
        assert set(loaded.names) >= {"df", "series", "arr", "meta", "pair", "np"}
        if "double" not in loaded.names:  # a kernel may refuse to send code back out
            assert kind == "kernel" and "double" in skipped
            await target.execute("def double(v):\n    return 2 * v\n")
        pd.testing.assert_frame_equal(await target.retrieve("df"), frame)
        series = await target.retrieve("series")
        assert series.name == "xs" and series.equals(frame["x"].rename("xs"))
        check = await target.execute("print(double(21), arr.sum(), meta['tags'], pair, np.pi > 3)")
        assert check.success, check.error_text
        assert check.output.strip() == "42 45 ['a', 'b'] (1, 2) True"
    finally:
        await source.stop()
        await target.stop()
