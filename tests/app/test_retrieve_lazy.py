"""`/retrieve NAME out.parquet` of a lazy frame (issue 37, item 3) streams it to Parquet where
it lives: Polars `sink_parquet`, Dask a partition at a time, DuckDB its own COPY. Nothing
is patched: each source makes its rows on demand (a Polars IO source, a Dask `from_map`, a
DuckDB `range`), so the process holds the whole frame only if something collects it, and
the test reads the process's peak resident memory (Linux's VmHWM, reset before the write)
against the frame's size. The written file's rows equal the source's."""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow.parquet as pq
import pytest

from cave_tui import CaveAgent
from cave_tui.app.commands import load_commands
from cave_tui.models import ScriptedModel
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Variable
from tests.helpers.front_end import RecordingContext

pl = pytest.importorskip("polars")
dd = pytest.importorskip("dask.dataframe")
duckdb = pytest.importorskip("duckdb")

PARTS, PART_ROWS = 64, 250_000  # 16,000,000 int64 rows: 122 MB when held whole
FRAME_MB = PARTS * PART_ROWS * 8 / 2**20
ROWS = PARTS * PART_ROWS


def _status(key: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(key + ":"):
            return int(line.split()[1]) * 1024
    raise LookupError(key)


@contextlib.contextmanager
def peak_growth() -> Iterator[list[float]]:
    """The process's peak resident memory over what it held before, in MB (Linux)."""
    Path("/proc/self/clear_refs").write_text("5")  # resets VmHWM to the current RSS
    base = _status("VmRSS")
    out: list[float] = []
    yield out
    out.append((_status("VmHWM") - base) / 2**20)


def polars_frame(parts: int) -> Any:
    from polars.io.plugins import register_io_source

    def source(with_columns: Any, predicate: Any, n_rows: Any, batch_size: Any) -> Iterator[Any]:
        for i in range(parts):
            yield pl.DataFrame({"n": pl.int_range(i * PART_ROWS, (i + 1) * PART_ROWS, eager=True)})

    return register_io_source(source, schema={"n": pl.Int64})


def _part(i: int) -> pd.DataFrame:
    import numpy as np

    return pd.DataFrame({"n": np.arange(i * PART_ROWS, (i + 1) * PART_ROWS, dtype="int64")})


FRAMES = {
    "polars": polars_frame,
    "dask": lambda parts: dd.from_map(_part, range(parts)),
    "duckdb": lambda parts: duckdb.sql(f"SELECT range AS n FROM range({parts * PART_ROWS})"),
}


@pytest.fixture(scope="module")
def synchronous_dask() -> Iterator[None]:
    import dask

    with dask.config.set(scheduler="synchronous"):  # one partition at a time, here
        yield


@pytest.fixture
async def ctx(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Any:
    monkeypatch.chdir(tmp_path)
    runtime = IPythonRuntime()
    context = RecordingContext(CaveAgent(ScriptedModel([]), runtime))
    yield context
    await runtime.stop()


async def _streamed(ctx: Any, name: str, value: Any, target: str, rows: int) -> float:
    ctx.runtime.inject_variable(Variable(name, value))
    with peak_growth() as peak:
        assert await load_commands().dispatch(f"/retrieve {name} {target}", ctx), ctx.last
    path = Path(target).absolute()
    assert pq.read_metadata(path).num_rows == rows
    assert f"{rows:,} rows streamed where the frame lives, never collected" in ctx.last
    assert [p.name for p in path.parent.iterdir() if p.name.startswith(".")] == []  # no temp
    column = pq.read_table(path, columns=["n"]).column("n")
    assert column[0].as_py() == 0 and column[rows - 1].as_py() == rows - 1
    return peak[0]


@pytest.mark.parametrize("engine", sorted(FRAMES))
async def test_a_lazy_frame_is_streamed_to_parquet_never_held_whole(
    ctx: Any, engine: str, synchronous_dask: None
) -> None:
    make = FRAMES[engine]
    await _streamed(ctx, "small", make(2), "small.parquet", 2 * PART_ROWS)  # libraries warmed
    peak = await _streamed(ctx, "big", make(PARTS), "big.parquet", ROWS)
    assert peak < FRAME_MB / 2, f"{engine}: peak grew {peak:.0f} MB for a {FRAME_MB:.0f} MB frame"


async def test_no_extension_writes_parquet_and_an_existing_file_is_asked_about(ctx: Any) -> None:
    ctx.runtime.inject_variable(Variable("lf", pl.LazyFrame({"a": [1, 2, 3]})))
    registry = load_commands()
    assert await registry.dispatch("/retrieve lf", ctx), ctx.last
    written = Path("retrieved/lf.parquet")
    assert pq.read_metadata(written).num_rows == 3 and "polars.LazyFrame" in ctx.last
    ctx.answers = [False]
    assert await registry.dispatch("/retrieve lf retrieved/lf.parquet", ctx)
    assert "left as it was" in ctx.last and ctx.questions
    ctx.answers = [True]
    ctx.runtime.inject_variable(Variable("lf4", pl.LazyFrame({"a": [1, 2, 3, 4]})))
    assert await registry.dispatch("/retrieve lf4 retrieved/lf.parquet", ctx)
    assert pq.read_metadata(written).num_rows == 4


async def test_what_is_not_streamed_says_why_and_writes_nothing(ctx: Any, tmp_path: Path) -> None:
    con = duckdb.connect()
    ctx.runtime.inject_variable(Variable("con", con))
    ctx.runtime.inject_variable(Variable("lf", pl.LazyFrame({"a": [1]})))
    registry = load_commands()
    assert not await registry.dispatch("/retrieve con con.parquet", ctx)
    assert "holds tables, not one frame" in ctx.last
    assert not await registry.dispatch("/retrieve lf lf.csv", ctx)
    assert "written only as Parquet, streamed" in ctx.last
    failing = pl.LazyFrame({"a": ["x"]}).select(pl.col("a").cast(pl.Int64, strict=True))
    ctx.runtime.inject_variable(Variable("bad", failing))
    assert not await registry.dispatch("/retrieve bad bad.parquet", ctx)
    assert "streaming the polars.LazyFrame failed" in ctx.last
    assert sorted(p.name for p in tmp_path.iterdir()) == []  # nothing, not even a temp file
    con.close()
