"""The in-process memory watchdog: its cost, how far past the limit a cell gets, and why
`RLIMIT_AS` is not used in process (address space vs resident memory).

    python bench/memory_watchdog.py     # prints a table, writes bench/results/memory_watchdog.json

Each blow-up runs in its own runtime with a limit a little above this process's memory at
that moment, so the figures fit a small machine (at most ~1.5 GB is allocated).
"""

from __future__ import annotations

import asyncio
import os
import statistics
import sys
import threading
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "bench")]

from _common import report

from cave_tui.runtime.failures import RuntimeFailure
from cave_tui.runtime.ipython import IPythonRuntime, MemoryLimitWarning
from cave_tui.runtime.memory import process_rss

MiB = 1 << 20
MEMORY = RuntimeFailure.MEMORY_LIMIT


def vm_size() -> int:
    with open("/proc/self/statm") as statm:
        return int(statm.read().split()[0]) * os.sysconf("SC_PAGE_SIZE")


def micro(fn: Any, repeat: int = 20_000) -> float:
    started = time.perf_counter()
    for _ in range(repeat):
        fn()
    return (time.perf_counter() - started) / repeat * 1e6


async def round_trip(runtime: IPythonRuntime, repeat: int = 300) -> float:
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await runtime.execute("1 + 1")
        samples.append(time.perf_counter() - started)
    return statistics.median(samples) * 1e3


async def blow_up(code: str, over: int, setup: str = "") -> dict[str, Any]:
    """Run *code* under a limit *over* bytes above now; what the watchdog did."""
    runtime = IPythonRuntime(memory_limit=None)
    if setup:
        await runtime.execute(setup)
    limit = process_rss() + over
    watched = IPythonRuntime(memory_limit=limit)
    if setup:
        await watched.execute(setup)
    watchdog = watched.memory_watchdog
    assert watchdog is not None
    warned_at: list[float] = []
    started = time.perf_counter()

    def seen(text: str) -> None:
        if MemoryLimitWarning.__name__ in text and not warned_at:
            warned_at.append(time.perf_counter() - started)

    result = await watched.execute(code, on_output=seen)
    elapsed = time.perf_counter() - started
    out = {
        "error_type": result.error_type,
        "seconds": elapsed,
        "warned_after": warned_at[0] if warned_at else None,
        "after": process_rss(),
        "limit": limit,
        "text": result.error_text or "",
        "samples": watchdog.samples,
        "over": (watchdog.last.peak - limit) if watchdog.last else 0,
    }
    await watched.stop()
    await runtime.stop()
    return out


async def main() -> None:
    rows: list[dict[str, Any]] = []
    rows.append({"metric": "process_rss() (statm read)", "value": micro(process_rss), "unit": "µs"})
    runtime = IPythonRuntime(memory_limit="auto")
    rows.append({"metric": "memory_use()", "value": micro(runtime.memory_use), "unit": "µs"})
    off = IPythonRuntime(memory_limit=None)
    rows.append(
        {"metric": "`1+1` cell, watchdog on", "value": await round_trip(runtime), "unit": "ms"}
    )
    rows.append(
        {"metric": "`1+1` cell, watchdog off", "value": await round_trip(off), "unit": "ms"}
    )
    rows.append(
        {
            "metric": "auto limit on this machine",
            "value": (runtime.memory_limit or 0) // MiB,
            "unit": "MiB",
        }
    )
    await runtime.stop()
    await off.stop()

    loop = await blow_up("hog = []\nwhile True:\n    hog.append(b'x' * (1 << 20))\n", 200 * MiB)
    rows.append(
        {
            "metric": "Python loop: stopped (MemoryLimit)",
            "value": int(loop["error_type"] == MEMORY),
            "unit": "",
        }
    )
    rows.append(
        {"metric": "Python loop: cell time to the stop", "value": loop["seconds"], "unit": "s"}
    )
    rows.append(
        {
            "metric": "Python loop: peak RSS over the limit",
            "value": loop["over"] // MiB,
            "unit": "MiB",
        }
    )
    rows.append(
        {
            "metric": "Python loop: RSS after, vs limit",
            "value": (loop["after"] - loop["limit"]) // MiB,
            "unit": "MiB",
        }
    )

    ones = await blow_up("a = np.ones(150_000_000)", 100 * MiB, setup="import numpy as np")
    rows.append(
        {
            "metric": "np.ones 1.2 GB: warned after",
            "value": ones["warned_after"] or -1.0,
            "unit": "s",
        }
    )
    rows.append(
        {
            "metric": "np.ones 1.2 GB: stopped (MemoryLimit)",
            "value": int(ones["error_type"] == MEMORY),
            "unit": "",
        }
    )
    rows.append({"metric": "np.ones 1.2 GB: cell time", "value": ones["seconds"], "unit": "s"})
    rows.append(
        {
            "metric": "np.ones 1.2 GB: peak RSS over the limit",
            "value": ones["over"] // MiB,
            "unit": "MiB",
        }
    )

    merge = await blow_up(
        "m = f.merge(f, on='k')",
        200 * MiB,
        setup=(
            "import numpy as np, pandas as pd\n"
            "f = pd.DataFrame({'k': np.repeat(np.arange(4_000), 200), 'v': 1.0})"
        ),
    )
    rows.append(
        {
            "metric": "m:m merge 160M rows: warned after",
            "value": merge["warned_after"] or -1.0,
            "unit": "s",
        }
    )
    rows.append(
        {
            "metric": "m:m merge: stopped (MemoryLimit)",
            "value": int(merge["error_type"] == MEMORY),
            "unit": "",
        }
    )
    rows.append({"metric": "m:m merge: cell time", "value": merge["seconds"], "unit": "s"})
    rows.append(
        {"metric": "m:m merge: samples taken during it", "value": merge["samples"], "unit": ""}
    )
    rows.append(
        {
            "metric": "m:m merge: peak RSS over the limit",
            "value": merge["over"] // MiB,
            "unit": "MiB",
        }
    )

    # RLIMIT_AS would limit address space, not memory in use: compare the two.
    import pyarrow as pa

    pa.table({"a": list(range(1000))})
    done = threading.Event()

    def work() -> None:
        _ = [bytes(1000) for _ in range(1000)]
        done.wait()

    threads = [threading.Thread(target=work) for _ in range(12)]
    for thread in threads:
        thread.start()
    time.sleep(0.3)
    rows.append(
        {"metric": "VmSize, pandas+pyarrow+12 threads", "value": vm_size() // MiB, "unit": "MiB"}
    )
    rows.append({"metric": "RSS, same moment", "value": process_rss() // MiB, "unit": "MiB"})
    done.set()
    for thread in threads:
        thread.join()
    report("memory_watchdog", rows, {"texts": {"loop": loop["text"], "merge": merge["text"]}})


if __name__ == "__main__":
    asyncio.run(main())
