"""Long loads report progress and stop on cancel, between chunks, with nothing injected."""

from __future__ import annotations

import asyncio
import threading

import numpy as np
import pandas as pd
import pytest

from cave_tui.dataio import LoadCancelled, inject_file, load_file, load_file_async
from cave_tui.dataio import load as load_module
from cave_tui.runtime.ipython import IPythonRuntime


@pytest.fixture
def chunked(monkeypatch):
    """Force the chunked paths on small files (they are what big files take)."""
    monkeypatch.setattr(load_module, "SMALL_FILE", 0)
    monkeypatch.setattr(load_module, "CSV_CHUNK_ROWS", 1_000)
    monkeypatch.setattr(load_module, "BLOCK", 4_096)
    monkeypatch.setattr(load_module, "MIN_BATCH_ROWS", 1_000)
    monkeypatch.setattr(load_module, "JSONL_REPORT_LINES", 500)


def _frame(rows: int) -> pd.DataFrame:
    rng = np.random.default_rng(0)
    return pd.DataFrame({"a": np.arange(rows), "b": rng.normal(size=rows).round(6)})


def _files(tmp_path):
    df = _frame(20_000)
    paths = {}
    paths["csv"] = tmp_path / "big.csv"
    _frame(100_000).to_csv(paths["csv"], index=False)  # pandas reads 256 KiB at a time
    paths["parquet-row-groups"] = tmp_path / "rg.parquet"
    df.to_parquet(paths["parquet-row-groups"], row_group_size=2_000)
    paths["parquet-one-group"] = tmp_path / "one.parquet"
    df.to_parquet(paths["parquet-one-group"])
    paths["npy"] = tmp_path / "a.npy"
    np.save(paths["npy"], np.arange(200_000, dtype="float64"))
    paths["jsonl"] = tmp_path / "r.jsonl"
    df.head(5_000).to_json(paths["jsonl"], orient="records", lines=True)
    paths["feather"] = tmp_path / "f.arrow"
    import pyarrow as pa
    import pyarrow.ipc as ipc

    table = pa.Table.from_pandas(df)
    with ipc.new_file(str(paths["feather"]), table.schema) as writer:
        for batch in table.to_batches(max_chunksize=2_000):
            writer.write_batch(batch)
    return df, paths


@pytest.mark.parametrize(
    "kind", ["csv", "parquet-row-groups", "parquet-one-group", "npy", "jsonl", "feather"]
)
def test_progress_is_reported_and_values_are_intact(kind, tmp_path, chunked):
    df, paths = _files(tmp_path)
    seen = []
    loaded = load_file(paths[kind], progress=seen.append)
    assert len(seen) >= 3, seen
    fractions = [p.fraction for p in seen if p.stage == "reading"]
    assert fractions == sorted(fractions) and fractions[0] < 0.5
    assert all(p.path.endswith(paths[kind].name) for p in seen)
    if kind == "npy":
        np.testing.assert_array_equal(loaded.value, np.arange(200_000, dtype="float64"))
    elif kind == "jsonl":
        pd.testing.assert_frame_equal(loaded.value, df.head(5_000))
    elif kind == "csv":
        pd.testing.assert_frame_equal(loaded.value, _frame(100_000))
    else:
        pd.testing.assert_frame_equal(loaded.value, df)


@pytest.mark.parametrize("kind", ["csv", "parquet-row-groups", "parquet-one-group", "npy"])
def test_cancel_stops_between_chunks(kind, tmp_path, chunked):
    _, paths = _files(tmp_path)
    cancel = threading.Event()
    reports = []

    def progress(p):
        reports.append(p)
        if len(reports) == 2:
            cancel.set()

    with pytest.raises(LoadCancelled, match="cancelled"):
        load_file(paths[kind], cancel=cancel, progress=progress)
    assert len(reports) == 2  # stopped at the next chunk boundary


async def test_cancelling_the_task_cancels_the_load_and_injects_nothing(tmp_path, monkeypatch):
    monkeypatch.setattr(load_module, "SMALL_FILE", 0)
    monkeypatch.setattr(load_module, "CSV_CHUNK_ROWS", 500)
    _frame(50_000).to_csv(tmp_path / "slow.csv", index=False)
    started = threading.Event()
    stopped = threading.Event()

    def progress(p):
        started.set()
        threading.Event().wait(0.02)  # a slow disk

    runtime = IPythonRuntime()
    task = asyncio.create_task(inject_file(runtime, tmp_path / "slow.csv", progress=progress))
    while not started.is_set():
        await asyncio.sleep(0.01)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    stopped.set()
    assert "slow" not in await runtime.names()


async def test_async_load_with_a_callable_cancel_flag(tmp_path, chunked):
    _, paths = _files(tmp_path)
    with pytest.raises(LoadCancelled):
        await load_file_async(paths["csv"], cancel=lambda: True)
    loaded = await load_file_async(paths["csv"], cancel=lambda: False)
    assert len(loaded.value) == 100_000 and len(loaded.sha256) == 64
