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
    assert "saving it would compute it" in kept["lf"].reason
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
