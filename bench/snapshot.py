"""Session snapshots of a 2,000-variable namespace (issue 30), in process and in the kernel.

python bench/snapshot.py            # prints a table, writes bench/results/snapshot.json
python bench/snapshot.py --names 500

The namespace mixes what an analysis holds: small lists, small arrays, small frames and
instances of a class a cell wrote (the kernel keeps those to itself: it sends their dill
bytes). Figures, each the median of 3:
- the first snapshot (every value read and written; at a session's start or exit);
- the snapshot after a step that changed 3 names, as a step now takes it (only what the
  step reported changed is digested and read: `trust_reports`) - target at most 1 s -
  and as every step took it before (every value digested again, as main did);
- the first snapshot bounded as a step's (at most `SnapshotBounds` per step: the rest
  waits for the next one). A turn no longer waits for any of these (they run in the
  background); before, it waited for each step's.
`snapshot_figures(names)` returns the figures as a dict (seconds), for bench/kernel.py.
Files go to a temporary folder that is deleted at the end.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report

from cave_tui.dataio.checkpoint import STEP_DIGEST_BELOW, SnapshotBounds, checkpoint_namespace
from cave_tui.runtime.ipython import IPythonRuntime

CHANGED = ("v1", "v2", "v3")
SETUP = (
    "import numpy as np\nimport pandas as pd\n"
    "class Point:\n    def __init__(self, x):\n        self.x = x\n"
)


def mixed_namespace(names: int) -> str:
    """A cell binding *names* values: lists, arrays, frames and `Point`s, in turn."""
    kinds = (
        "v{i} = [{i}, 'x{i}']",
        "v{i} = np.arange(50) + {i}",
        "v{i} = pd.DataFrame({{'a': np.arange(10) + {i}, 'b': ['s'] * 10}})",
        "v{i} = Point({i})",
    )
    return SETUP + "\n".join(kinds[i % len(kinds)].format(i=i) for i in range(names))


async def _figures(runtime: Any, tmp: Path, names: int, label: str) -> dict[str, float]:
    await runtime.execute(mixed_namespace(names))
    firsts, steps, before, bounded = [], [], [], []
    for round_ in range(3):
        folder = tmp / f"{label}-{round_}"
        started = time.perf_counter()
        result = await checkpoint_namespace(
            runtime, folder, changed=None, resave_below=STEP_DIGEST_BELOW, sync=True
        )
        firsts.append(time.perf_counter() - started)
        assert len(result.saved) == names, (len(result.saved), result.skipped[:3])
        for quick, out in ((True, steps), (False, before)):
            await runtime.execute("v1, v2, v3 = v2, v3, v1")  # a step that changed 3 names
            started = time.perf_counter()
            step = await checkpoint_namespace(
                runtime,
                folder,
                changed=set(CHANGED),
                resave_below=STEP_DIGEST_BELOW,
                sync=True,
                trust_reports=quick,
                bounds=SnapshotBounds(),
            )
            out.append(time.perf_counter() - started)
            assert sorted(step.written) == list(CHANGED), step.written
        started = time.perf_counter()
        await checkpoint_namespace(
            runtime,
            tmp / f"{label}-bounded-{round_}",
            changed=None,
            resave_below=STEP_DIGEST_BELOW,
            trust_reports=True,
            bounds=SnapshotBounds(),
        )
        bounded.append(time.perf_counter() - started)
    return {
        f"{label}_first_s": statistics.median(firsts),
        f"{label}_step_s": statistics.median(steps),
        f"{label}_step_digest_all_s": statistics.median(before),
        f"{label}_first_step_bounded_s": statistics.median(bounded),
    }


async def _all(names: int, tmp: Path) -> dict[str, float]:
    from cave_tui.runtime.kernel import IPyKernelRuntime

    figures = await _figures(IPythonRuntime(), tmp, names, "in_process")
    kernel = IPyKernelRuntime()
    try:
        await kernel.start()
        figures |= await _figures(kernel, tmp, names, "kernel")
    finally:
        await kernel.stop()
    return figures


def snapshot_figures(names: int = 2000) -> dict[str, float]:
    """Seconds: first snapshot, a step's snapshot (3 changed) now and as before, and the
    first snapshot bounded as a step's, in process and in the kernel, for *names* values."""
    tmp = Path(tempfile.mkdtemp(prefix="cave-bench-snapshot-", dir=Path.cwd()))
    try:
        return asyncio.run(_all(names, tmp))
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--names", type=int, default=2000)
    args = parser.parse_args()
    figures = snapshot_figures(args.names)
    n = f"{args.names:,}"
    bound = SnapshotBounds().describe()
    rows = []
    for label, where in (("in_process", "in process"), ("kernel", "kernel")):
        step = figures[f"{label}_step_s"]
        rows += [
            {"metric": f"{where}: first snapshot, {n} names (all read)",
             "value": figures[f"{label}_first_s"], "unit": "s"},
            {"metric": f"{where}: step snapshot, {n} names, 3 changed", "value": step,
             "unit": "s", "target": "<= 1.0", "ok": step <= 1.0},
            {"metric": f"{where}:   the same, every value digested (before)",
             "value": figures[f"{label}_step_digest_all_s"], "unit": "s"},
            {"metric": f"{where}: first snapshot bounded as a step's ({bound})",
             "value": figures[f"{label}_first_step_bounded_s"], "unit": "s"},
        ]  # fmt: skip
    load = os.getloadavg()
    print(f"load average during the run: {load[0]:.1f} (1 min), {load[2]:.1f} (15 min)")
    report("snapshot", rows, {"load_average": load, "figures": figures})


if __name__ == "__main__":
    main()
