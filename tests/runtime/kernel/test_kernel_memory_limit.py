"""The kernel's memory limit counts memory, not reserved address space.

A 600 MB kernel runs a Polars streaming aggregation over a Parquet file of about 290 MB
(Polars reserves far more address space than it touches, which an RLIMIT_AS of 600 MB
refused), while a cell that really allocates past the limit is still stopped with
`MemoryError` and the "memory limit" notice, and the kernel lives on.
"""

from __future__ import annotations

import asyncio
import resource
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cave_tui.runtime.kernel import IPyKernelRuntime
from tests.runtime.kernel.conftest import make_runtime

LIMIT = 600 * 2**20
CHUNK = 1_000_000  # rows: an int32 key and four float64 columns, 36 MB uncompressed
CHUNKS = 8  # written 8 times: about 290 MB
KEYS = 100


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("memlimit")
    rng = np.random.default_rng(0)
    columns = {"k": rng.integers(0, KEYS, CHUNK, dtype=np.int32)}
    columns |= {name: rng.random(CHUNK) for name in ("v", "x0", "x1", "x2")}
    chunk = pa.table(columns)
    with pq.ParquetWriter(folder / "data.parquet", chunk.schema, compression="none") as writer:
        for _ in range(CHUNKS):
            writer.write_table(chunk)
    return folder


@pytest.fixture(scope="module")
def limited(folder: Path) -> Iterator[IPyKernelRuntime]:
    # cwd= the data's folder: the kernel runs as this user and reads the file there
    runtime = make_runtime(memory_limit=LIMIT, cwd=str(folder), checkpoint_bytes="16M")
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


async def test_streaming_aggregation_fits_a_small_limit(limited: IPyKernelRuntime) -> None:
    assert (Path(limited.workdir) / "data.parquet").stat().st_size > 250 * 2**20
    result = await limited.execute(
        "import polars as pl\n"
        "lf = pl.scan_parquet('data.parquet')\n"
        "out = lf.group_by('k').agg(pl.col('v').mean()).collect(engine='streaming')\n"
        "print(out.height, round(float(out['v'].mean()), 1))",
        timeout=120,
    )
    assert result.success, result.error_text
    assert result.output == f"{KEYS} 0.5\n"
    limits = await limited.execute(
        "import resource\n"
        "print(resource.getrlimit(resource.RLIMIT_DATA)[0], "
        "resource.getrlimit(resource.RLIMIT_AS)[0])"
    )
    data, space = (int(x) for x in limits.output.split())
    assert data == LIMIT and space >= 4 * LIMIT
    assert resource.RLIM_INFINITY not in (data, space)


async def test_a_cell_past_the_limit_is_still_stopped(limited: IPyKernelRuntime) -> None:
    await limited.execute("kept = 41")
    pid = limited.kernel_pid
    one = await limited.execute(f"big = bytearray({2 * LIMIT})")
    assert not one.success and one.error_type == "MemoryError", one.error_text
    assert "memory limit" in (one.notice or "")
    grown = await limited.execute(
        "x = []\nwhile True:\n    x.append(bytearray(10**7))\n    x[-1][::4096] = b'1' * 2442",
        timeout=120,
    )
    assert not grown.success and grown.error_type == "MemoryError", grown.error_text
    assert "memory limit" in (grown.notice or "")
    assert limited.kernel_pid == pid  # stopped by MemoryError: the kernel lives on
    freed = await limited.execute("n = len(x)\ndel x\nprint(n >= 15, kept + 1)")
    assert freed.output == "True 42\n", freed.error_text  # 150 MB or more was really held
