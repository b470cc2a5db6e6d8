"""Data larger than the runtime's memory limit is refused before it is sent or decoded, with
"not enough memory in the kernel: needs N, limit M", and nothing waits for ever (issue 29,
items 6 and 7). The files are small on disk but claim (or decode to) hundreds of MB."""

from __future__ import annotations

import asyncio
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import pytest_asyncio
from numpy.lib import format as npformat

from cave_tui.dataio import inject_file, load_dump
from cave_tui.dataio.dump import dump_namespace
from cave_tui.dataio.errors import NotEnoughMemoryError
from cave_tui.dataio.sizing import estimate_file
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.runtime.kernel.errors import KernelOutOfMemory
from cave_tui.runtime.memory import process_rss

pytestmark = pytest.mark.asyncio(loop_scope="module")
MiB = 1 << 20
LIMIT = "300M"
REFUSED = "not enough memory in the kernel: needs "
ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """A 40M-row zstd parquet of zeros (about 200 KB, 320 MB once read), a .npy whose header
    claims 400 MB (no data follows), a sparse 400 MB CSV, and a small CSV."""
    folder = tmp_path_factory.mktemp("sizing")
    zeros = folder / "zeros.parquet"
    chunk = pa.table({"z": np.zeros(1_000_000)})
    with pq.ParquetWriter(zeros, chunk.schema, compression="zstd") as writer:
        for _ in range(40):
            writer.write_table(chunk)
    npy = folder / "claims.npy"
    with open(npy, "wb") as f:
        npformat.write_array_header_1_0(
            f, {"descr": "<f8", "fortran_order": False, "shape": (50_000_000,)}
        )
    big_csv = folder / "big.csv"
    with open(big_csv, "wb") as f:
        f.write(b"a,b\n" + b"1,2\n" * 250_000)  # 1 MB of rows, then …
        f.truncate(400 * MiB)  # … a sparse hole: nothing more written to disk
    small_csv = folder / "small.csv"
    small_csv.write_text("a,b\n1,2\n3,4\n")
    return {"zeros": zeros, "npy": npy, "big_csv": big_csv, "small_csv": small_csv}


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel():
    runtime = IPyKernelRuntime(memory_limit=LIMIT, cell_timeout=30)
    await runtime.start()
    yield runtime
    await runtime.stop()


async def test_sizes_come_from_metadata(files: dict[str, Path]) -> None:
    zeros = estimate_file(files["zeros"], "parquet")
    assert files["zeros"].stat().st_size < 2 * MiB
    assert zeros is not None and zeros.bytes >= 320_000_000  # the footer's rows x 8 bytes
    npy = estimate_file(files["npy"], "npy")
    assert npy is not None and npy.bytes >= 400_000_000  # the header's shape x itemsize
    csv = estimate_file(files["big_csv"], "csv")
    assert csv is not None and csv.bytes >= 400 * MiB


@pytest.mark.parametrize("which", ["zeros", "npy", "big_csv"])
async def test_kernel_refuses_over_limit_files_at_once(kernel, files, which) -> None:
    started = time.monotonic()
    rss = process_rss()
    with pytest.raises(NotEnoughMemoryError) as caught:
        await asyncio.wait_for(inject_file(kernel, files[which], "big"), 30)
    message = str(caught.value)
    assert message.startswith(REFUSED), message
    assert "limit 300 MiB" in message and str(files[which]) in message
    assert caught.value.limit == 300 * MiB and caught.value.needs > caught.value.limit
    assert time.monotonic() - started < 10
    assert process_rss() - rss < 100 * MiB  # nothing decoded in the host either
    assert "big" not in await kernel.names()
    result = await kernel.execute("print(6 * 7)")  # the kernel is still there
    assert result.success and result.output.strip() == "42"


async def test_ainject_refuses_before_sending(kernel) -> None:
    with pytest.raises(KernelOutOfMemory) as caught:
        await asyncio.wait_for(kernel.ainject(Variable("arr", np.ones(6_000_000))), 30)
    assert str(caught.value).startswith(REFUSED)
    assert caught.value.limit == 300 * MiB
    assert "arr" not in await kernel.names()


async def test_ainject_many_refuses_what_does_not_fit_and_sends_the_rest(kernel) -> None:
    """The batched path (loads of many values) sizes each value before a byte is sent."""
    items = [Variable("fits", [1, 2, 3]), Variable("arr", np.ones(6_000_000))]
    errors = await asyncio.wait_for(kernel.ainject_many(items), 30)
    assert errors[0] is None
    assert isinstance(errors[1], KernelOutOfMemory) and str(errors[1]).startswith(REFUSED)
    names = await kernel.names()
    assert "fits" in names and "arr" not in names


async def test_load_sizes_the_dump_before_decoding(kernel, files, tmp_path) -> None:
    """A valid dump holding a tiny parquet of zeros that decodes to 320 MB."""
    source = IPythonRuntime(memory_limit=None)
    source.inject(Variable("z", pd.DataFrame({"z": [0.0, 1.0]})))
    await dump_namespace(source, tmp_path / "dump")
    folder = tmp_path / "dump"
    data = files["zeros"].read_bytes()
    (folder / "z.parquet").write_bytes(data)
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = manifest["variables"][0]
    entry.update(bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
    (folder / "manifest.json").write_text(json.dumps(manifest))
    rss = process_rss()
    started = time.monotonic()
    with pytest.raises(NotEnoughMemoryError) as caught:
        await asyncio.wait_for(load_dump(kernel, folder), 30)
    assert str(caught.value).startswith(REFUSED)
    assert time.monotonic() - started < 10
    assert process_rss() - rss < 100 * MiB  # the host decoded nothing
    assert "z" not in await kernel.names()


async def test_in_process_runtime_sizes_against_its_limit(files) -> None:
    runtime = IPythonRuntime(memory_limit=process_rss() + 100 * MiB)
    try:
        with pytest.raises(NotEnoughMemoryError) as caught:
            await inject_file(runtime, files["zeros"], "big")
        assert str(caught.value).startswith("not enough memory in the in-process runtime: needs")
        assert "big" not in await runtime.names()
        injected = await inject_file(runtime, files["small_csv"], "small")  # what fits loads
        assert injected.name == "small"
    finally:
        await runtime.stop()


def cave(*args: str) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k != "CAVE_KERNEL"}  # the kernel, for real
    env["PYTHONPATH"] = str(ROOT)
    return subprocess.run(
        [sys.executable, "-m", "cave_tui", "run", "--kernel", "--memory-limit", LIMIT, *args],
        capture_output=True,
        text=True,
        timeout=60,
        env=env,
        cwd=ROOT,
    )


async def test_cave_run_inject_flag_refuses(files) -> None:
    started = time.monotonic()
    done = cave("--inject", str(files["zeros"]), "/vars")
    assert time.monotonic() - started < 40
    assert done.returncode == 2, done.stderr
    assert REFUSED in " ".join(done.stderr.split()), done.stderr


async def test_cave_run_inject_command_refuses(files) -> None:
    done = cave(f"/inject {files['npy']} as x")
    assert done.returncode == 2, done.stderr
    assert REFUSED in " ".join((done.stdout + done.stderr).split()), done.stderr
