"""Data bigger than the kernel's memory: a Parquet dataset injected lazily and aggregated.

    python bench/scale.py           # ~3 GB of Parquet, a 1 GB kernel (bench/results/scale.json)
    python bench/scale.py --quick   # ~300 MB against the same 1 GB kernel (scale-quick.json)

The dataset (an int key and four float columns, written a chunk at a time with a pyarrow
ParquetWriter, never whole in memory) is generated in a temporary folder, deleted at the end.
It is injected with `inject_lazy` (a Polars scan) into a kernel runtime whose memory limit
is 1 GB (RLIMIT_DATA, with an RLIMIT_AS backstop) and into the in-process runtime: time and
peak memory (VmHWM, reset before each step where Linux allows it) of the inject and of the
namespace summary. Then one
aggregation the agent's code would run, `lf.group_by("k").agg(pl.col("v").mean())
.collect(engine="streaming")`, in the kernel over the whole dataset, next to the same in
pandas (read_parquet + groupby) on the files that fit in a third of the kernel's limit.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from _common import report

from cave_tui.dataio import inject_lazy
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.kernel import IPyKernelRuntime

KERNEL_LIMIT = 2**30  # the kernel's memory limit: 1 GiB (RLIMIT_DATA)
CHUNK_ROWS = 1_000_000  # rows generated and written at a time (~36 MB)
FILES = 8  # the dataset is a folder of this many files
KEYS = 1000
ROW_BYTES = 4 + 4 * 8  # an int32 key and four float64 columns, uncompressed
MB = 2**20
AGGREGATE = 'lf.group_by("k").agg(pl.col("v").mean()).collect(engine="streaming")'


def generate(folder: Path, total_bytes: int) -> tuple[int, int]:
    """Write about *total_bytes* of Parquet under *folder*; returns (rows, bytes on disk)."""
    rng = np.random.default_rng(0)
    schema = pa.schema(
        [("k", pa.int32()), ("v", pa.float64())] + [(f"x{i}", pa.float64()) for i in range(3)]
    )
    chunks = max(1, total_bytes // FILES // (CHUNK_ROWS * ROW_BYTES))  # per file
    rows = 0
    for n in range(FILES):
        path = folder / f"part-{n:03d}.parquet"
        with pq.ParquetWriter(path, schema, compression="none") as writer:
            for _ in range(chunks):
                columns: list[Any] = [rng.integers(0, KEYS, CHUNK_ROWS, dtype=np.int32)]
                columns += [rng.random(CHUNK_ROWS) for _ in range(4)]
                writer.write_table(pa.Table.from_arrays(columns, schema=schema))
                rows += CHUNK_ROWS
                del columns
    return rows, sum(p.stat().st_size for p in folder.iterdir())


def reset_peak() -> bool:
    """Reset this process's peak RSS (VmHWM); False where Linux does not allow it."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        return True
    except OSError:
        return False


def peak_rss(pid: int | str = "self", field: str = "VmHWM") -> int:
    """The process's peak resident memory since start or the last reset (VmHWM; VmRSS: now),
    bytes."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1]) * 1024
    raise RuntimeError(f"no {field}")


async def kernel_step(runtime: IPyKernelRuntime, code: str) -> None:
    result = await runtime.execute(code)
    assert result.success, result.error


async def in_kernel(folder: Path) -> dict[str, float]:
    runtime = IPyKernelRuntime(checkpoint_bytes=0, memory_limit=KERNEL_LIMIT)
    await runtime.start()
    try:
        pid = runtime.kernel_pid
        assert pid is not None
        # What the agent's code imports anyway; the kernel's peak is reset after it.
        await kernel_step(runtime, "import polars as pl, pyarrow")
        await runtime.namespace_summary()
        await kernel_step(runtime, "open('/proc/self/clear_refs', 'w').write('5')")
        reset_peak()
        before = peak_rss(field="VmRSS"), peak_rss(pid, "VmRSS")
        started = time.perf_counter()
        await inject_lazy(runtime, folder, "lf")
        inject = time.perf_counter() - started
        started = time.perf_counter()
        rows = await runtime.namespace_summary()
        summary = time.perf_counter() - started
        assert any(r.name == "lf" for r in rows), rows
        host_peak, kernel_peak = peak_rss(), peak_rss(pid)
        address_space = peak_rss(pid, "VmSize")
        started = time.perf_counter()
        result = await runtime.execute(f"agg = {AGGREGATE}\nassert agg.height == {KEYS}")
        aggregate = time.perf_counter() - started
        error = str(result.error or "").strip().splitlines()
        return {
            "inject": inject,
            "summary": summary,
            "host_peak": host_peak,
            "kernel_peak": kernel_peak,
            "host_before": before[0],
            "kernel_before": before[1],
            "address_space": address_space,
            "aggregate": aggregate,
            "aggregate_ok": result.success,
            "aggregate_error": error[-1] if error else "",
        }
    finally:
        await runtime.stop()


async def aggregate_unlimited(folder: Path) -> dict[str, float]:
    """The aggregation in a kernel without an address-space limit: time and resident peak."""
    runtime = IPyKernelRuntime(checkpoint_bytes=0, memory_limit=None)
    await runtime.start()
    try:
        pid = runtime.kernel_pid
        assert pid is not None
        await kernel_step(runtime, "import polars as pl, pyarrow")
        await kernel_step(runtime, "open('/proc/self/clear_refs', 'w').write('5')")
        scan = f"lf = pl.scan_parquet({str(folder) + '/*.parquet'!r})"
        started = time.perf_counter()
        await kernel_step(runtime, f"{scan}\nagg = {AGGREGATE}\nassert agg.height == {KEYS}")
        seconds = time.perf_counter() - started
        return {"seconds": seconds, "peak": peak_rss(pid), "address": peak_rss(pid, "VmPeak")}
    finally:
        await runtime.stop()


async def in_process(folder: Path) -> dict[str, float]:
    import polars  # noqa: F401  # imported before the peak is reset, as in the kernel

    runtime = IPythonRuntime()
    await runtime.start()
    try:
        await runtime.namespace_summary()
        reset_peak()
        before = peak_rss(field="VmRSS")
        started = time.perf_counter()
        await inject_lazy(runtime, folder, "lf")
        inject = time.perf_counter() - started
        started = time.perf_counter()
        await runtime.namespace_summary()
        summary = time.perf_counter() - started
        return {"inject": inject, "summary": summary, "host_peak": peak_rss(), "before": before}
    finally:
        await runtime.stop()


def pandas_part(folder: Path, budget: int) -> dict[str, float]:
    """The same aggregation in pandas on the first files whose data fits in *budget*."""
    import pandas as pd
    import polars as pl

    files: list[Path] = []
    size = 0
    for path in sorted(folder.iterdir()):
        if files and size + path.stat().st_size > budget:
            break
        files.append(path)
        size += path.stat().st_size
    started = time.perf_counter()
    frame = pd.read_parquet(files)
    by_pandas = frame.groupby("k")["v"].mean()
    pandas_s = time.perf_counter() - started
    rows = len(frame)
    del frame
    started = time.perf_counter()
    lf = pl.scan_parquet([str(p) for p in files])
    by_polars = lf.group_by("k").agg(pl.col("v").mean()).collect(engine="streaming")
    polars_s = time.perf_counter() - started
    assert len(by_pandas) == by_polars.height == KEYS
    return {"pandas": pandas_s, "polars": polars_s, "bytes": size, "rows": rows}


async def main(quick: bool) -> None:
    load_before = os.getloadavg()
    target_bytes = (3 * KERNEL_LIMIT) // (10 if quick else 1)
    folder = Path(tempfile.mkdtemp(prefix="cave-scale-"))
    folder.chmod(0o755)  # the kernel may run as a user of its own: it reads the files
    try:
        started = time.perf_counter()
        rows, on_disk = generate(folder, target_bytes)
        generated = time.perf_counter() - started
        kernel = await in_kernel(folder)
        unlimited = await aggregate_unlimited(folder)
        local = await in_process(folder)
        part = pandas_part(folder, KERNEL_LIMIT // 3)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
    ms = 1000
    result = [
        {
            "metric": "dataset on disk (Parquet, 8 files)",
            "value": round(on_disk / MB),
            "unit": "MB",
            "target": f"~{target_bytes // MB} MB",
        },
        {"metric": "dataset rows", "value": rows},
        {"metric": "kernel memory limit (RLIMIT_DATA)", "value": KERNEL_LIMIT // MB, "unit": "MB"},
        {"metric": "generate (chunked ParquetWriter)", "value": round(generated, 1), "unit": "s"},
        {
            "metric": "kernel: lazy inject",
            "value": round(kernel["inject"] * ms, 1),
            "unit": "ms",
            "target": "<= 1000",
            "ok": kernel["inject"] <= 1,
        },
        {
            "metric": "kernel: namespace summary",
            "value": round(kernel["summary"] * ms, 1),
            "unit": "ms",
            "target": "<= 50",
            "ok": kernel["summary"] <= 0.05,
        },
        {
            "metric": "kernel: host peak RSS",
            "value": round(kernel["host_peak"] / MB),
            "unit": "MB",
            "target": "< 300",
            "ok": kernel["host_peak"] < 300 * MB,
        },
        {
            "metric": "  host RSS before the inject (imports)",
            "value": round(kernel["host_before"] / MB),
            "unit": "MB",
        },
        {
            "metric": "kernel: kernel peak RSS (inject+summary)",
            "value": round(kernel["kernel_peak"] / MB),
            "unit": "MB",
            "target": "< 300",
            "ok": kernel["kernel_peak"] < 300 * MB,
        },
        {
            "metric": "  kernel RSS before (polars, pyarrow imported)",
            "value": round(kernel["kernel_before"] / MB),
            "unit": "MB",
        },
        {
            "metric": "in process: lazy inject",
            "value": round(local["inject"] * ms, 1),
            "unit": "ms",
            "target": "<= 1000",
            "ok": local["inject"] <= 1,
        },
        {
            "metric": "in process: namespace summary",
            "value": round(local["summary"] * ms, 1),
            "unit": "ms",
            "target": "<= 50",
            "ok": local["summary"] <= 0.05,
        },
        {
            "metric": "in process: host peak RSS",
            "value": round(local["host_peak"] / MB),
            "unit": "MB",
            "target": "< 300",
            "ok": local["host_peak"] < 300 * MB,
        },
        {
            "metric": "  host RSS before the inject",
            "value": round(local["before"] / MB),
            "unit": "MB",
        },
        {
            "metric": "kernel: address space before the inject",
            "value": round(kernel["address_space"] / MB),
            "unit": "MB",
        },
        {
            "metric": "kernel (1 GB RLIMIT_DATA): polars streaming group_by",
            "value": round(kernel["aggregate"], 2),
            "unit": "s",
            "target": "runs",
            "ok": bool(kernel["aggregate_ok"]),
        },
        {
            "metric": "kernel, no limit: polars streaming group_by, all rows",
            "value": round(unlimited["seconds"], 2),
            "unit": "s",
        },
        {
            "metric": "  its peak RSS (VmHWM)",
            "value": round(unlimited["peak"] / MB),
            "unit": "MB",
            "target": f"< {KERNEL_LIMIT // MB}",
            "ok": unlimited["peak"] < KERNEL_LIMIT,
        },
        {
            "metric": "  its peak address space (VmPeak)",
            "value": round(unlimited["address"] / MB),
            "unit": "MB",
        },
        {
            "metric": "part that fits pandas (first files)",
            "value": round(part["bytes"] / MB),
            "unit": "MB",
        },
        {"metric": "  its rows", "value": part["rows"]},
        {
            "metric": "  pandas read_parquet + groupby",
            "value": round(part["pandas"], 2),
            "unit": "s",
        },
        {"metric": "  polars streaming, same part", "value": round(part["polars"], 2), "unit": "s"},
    ]
    report(
        "scale-quick" if quick else "scale",
        result,
        {
            "load_before": load_before,
            "load_after": os.getloadavg(),
            "aggregate": AGGREGATE,
            "aggregate_error_1gb": kernel["aggregate_error"],
        },
    )
    if not kernel["aggregate_ok"]:
        print(f"the aggregation under the 1 GB limit failed: {kernel['aggregate_error']}")
    print(
        f"load average before {load_before}, after {os.getloadavg()} "
        f"(the machine is shared: figures are upper bounds)"
    )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--quick", action="store_true", help="~300 MB instead of ~3 GB")
    asyncio.run(main(parser.parse_args().quick))
