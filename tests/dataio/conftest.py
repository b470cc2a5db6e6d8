"""Runtimes for the data tests: the in-process runtime, and the kernel runtime when it exists.

The kernel variant is skipped only when `cave_tui.runtime.kernel` is not in this
checkout (it is built in its own branch); everything else runs on both.
"""

from __future__ import annotations

import importlib.util

import numpy as np
import pandas as pd
import pytest
import pytest_asyncio

KERNEL_AVAILABLE = importlib.util.find_spec("cave_tui.runtime.kernel") is not None
RUNTIMES = [
    "ipython",
    pytest.param(
        "kernel",
        marks=pytest.mark.skipif(
            not KERNEL_AVAILABLE, reason="cave_tui.runtime.kernel is not in this checkout"
        ),
    ),
]


def make_runtime(kind: str):
    if kind == "kernel":
        from cave_tui.runtime.kernel import IPyKernelRuntime

        return IPyKernelRuntime()
    from cave_tui.runtime.ipython import IPythonRuntime

    return IPythonRuntime()


@pytest_asyncio.fixture(params=RUNTIMES, scope="module", loop_scope="module")
async def any_runtime(request):
    """One runtime per kind for the whole module (kernels are slow to start)."""
    runtime = make_runtime(request.param)
    await runtime.start()
    yield runtime
    await runtime.stop()


@pytest.fixture
def frame() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "id": np.arange(6, dtype="int64"),
            "x": [0.5, 1.5, np.nan, 3.25, 4.0, -1.0],
            "name": ["a", "b", "c", "d", "e", "f"],
            "when": pd.date_range("2024-01-01", periods=6, freq="D"),
        }
    )
