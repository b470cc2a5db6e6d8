"""The benign cells are real, working analysis: they run under strict in a real runtime."""

from __future__ import annotations

import importlib.util

from cave_tui.runtime import IPythonRuntime
from cave_tui.security import SecurityChecker
from tests.security.corpus import BENIGN, SETUP

RUNNABLE = [b for b in BENIGN if all(importlib.util.find_spec(m) for m in b.needs)]


async def test_benign_cells_run_under_strict():
    """Every benign cell whose libraries are installed runs to success under strict."""
    assert len(RUNNABLE) >= 30
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy("strict"))
    failures = []
    try:
        for cell in RUNNABLE:
            setup = await runtime.execute(SETUP, timeout=30)
            assert setup.success, setup.error_text
            result = await runtime.execute(cell.code, timeout=30)
            if not result.success:
                failures.append(f"{cell.name}: {result.error_type}: {result.error_text}")
    finally:
        await runtime.stop()
    assert not failures, "\n".join(failures)
