"""Lazy frames in the kernel (issue 37, item 2): the kernel describes them from their schema,
as the in-process runtime does (tests/runtime/test_lazy_frames.py), and runs none of them."""

from __future__ import annotations

import pytest

pytest.importorskip("polars")
pytest.importorskip("duckdb")

CELL = """\
import duckdb, polars as pl
calls = []
def counted(s):
    calls.append(1)
    return s
b = pl.col("a").map_batches(counted, return_dtype=pl.Int64)
lf = pl.LazyFrame({"a": [1, 2, 3]}).with_columns(b=b)
rel = duckdb.sql("SELECT range AS i FROM range(3)")
"""


async def test_the_kernel_summarises_lazy_frames_without_computing_them(kernel):
    await kernel.execute(CELL)
    rows = {row.name: row for row in await kernel.namespace_summary()}
    assert rows["lf"].type_name == "polars.LazyFrame" and rows["lf"].shape is None
    assert [c.name for c in rows["lf"].columns] == ["a", "b"]
    assert rows["lf"].lazy == "lazy, rows not computed"
    assert rows["rel"].type_name == "duckdb.Relation" and rows["rel"].small_result
    detail = await kernel.detail("lf")
    kept = {row.name: row for row in await kernel.persistable(1 << 20)}
    assert "a snapshot never computes it" in kept["lf"].reason and kept["lf"].streams
    result = await kernel.execute("print(len(calls))")
    assert result.output.strip() == "0"  # the plan's function never ran
    assert detail.dtypes == [("a", "Int64"), ("b", "Int64")]


async def test_a_lazy_injection_is_built_in_the_kernel(kernel):
    import tempfile
    from pathlib import Path

    import pandas as pd

    from cave_tui.dataio import inject_lazy

    with tempfile.TemporaryDirectory(dir=kernel.workdir) as folder:  # the kernel reads it
        path = Path(folder) / "a.parquet"
        pd.DataFrame({"n": range(10)}).to_parquet(path)
        path.chmod(0o644)
        Path(folder).chmod(0o755)
        await inject_lazy(kernel, path, "big")
        await _check_big(kernel)


async def _check_big(kernel):
    rows = {row.name: row for row in await kernel.namespace_summary()}
    assert rows["big"].type_name == "polars.LazyFrame" and rows["big"].lazy, rows["big"]
    result = await kernel.execute("print(big.collect()['n'].sum())")
    assert result.output.strip() == "45"


async def test_the_kernel_streams_a_lazy_frame_to_parquet_itself(kernel):
    """`/retrieve NAME out.parquet` in the kernel: the kernel writes the file; only the path,
    rows and bytes come back (no frame byte crosses), and what it cannot stream says why."""
    import tempfile
    from pathlib import Path

    import pyarrow.parquet as pq

    from cave_tui.runtime.shipped.lazy import NotStreamed

    await kernel.execute(
        "import duckdb, polars as pl\n"
        "lf = pl.LazyFrame({'n': range(1000)}).filter(pl.col('n') % 2 == 0)\n"
        "con = duckdb.connect()\nx = 1\n"
    )
    with tempfile.TemporaryDirectory(dir=kernel.workdir) as folder:
        Path(folder).chmod(0o777)  # the kernel's user writes here
        target = str(Path(folder) / "lf.parquet")
        done = await kernel.stream_parquet("lf", target)
        assert done is not None and (done.rows, done.type_name) == (500, "polars.LazyFrame")
        assert pq.read_metadata(target).num_rows == 500
        assert done.bytes == Path(target).stat().st_size
        with pytest.raises(FileExistsError):
            await kernel.stream_parquet("lf", target)
        assert await kernel.stream_parquet("x", str(Path(folder) / "x.parquet")) is None
        with pytest.raises(NotStreamed, match="holds tables"):
            await kernel.stream_parquet("con", str(Path(folder) / "con.parquet"))
        with pytest.raises(KeyError):
            await kernel.stream_parquet("nothing", target)
