"""The benign cells are real, working analysis: they run in a real runtime with the checker.

Each cell runs after `SETUP` under `strict` (cells with a `strict_reason` under `standard`);
cells that read a user's data file (`run_reason`) are checked but not run.
"""

from __future__ import annotations

import importlib.util

from cave_tui.runtime import IPythonRuntime
from cave_tui.security import SecurityChecker
from tests.security.benign_everyday import ALL_BENIGN
from tests.security.corpus import SETUP, Benign

RUNNABLE = [
    b
    for b in ALL_BENIGN
    if b.run_reason is None and all(importlib.util.find_spec(m) for m in b.needs)
]


async def _run_all(policy: str, cells: list[Benign]) -> list[str]:
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy(policy))
    failures = []
    try:
        for cell in cells:
            setup = await runtime.execute(SETUP, timeout=30)
            assert setup.success, setup.error_text
            result = await runtime.execute(cell.code, timeout=30)
            if not result.success:
                failures.append(f"{policy} {cell.name}: {result.error_type}: {result.error_text}")
    finally:
        await runtime.stop()
    return failures


async def test_benign_cells_run_under_the_checker():
    """Every benign cell whose libraries are installed runs to success with the checker on."""
    strict_cells = [b for b in RUNNABLE if b.strict_reason is None]
    standard_cells = [b for b in RUNNABLE if b.strict_reason is not None]
    assert len(strict_cells) >= 100 and standard_cells
    failures = await _run_all("strict", strict_cells)
    failures += await _run_all("standard", standard_cells)
    assert not failures, "\n".join(failures)
