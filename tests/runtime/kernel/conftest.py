"""Kernel fixtures. A kernel takes about a second to start, so tests share one per
module where they do not kill it; the runtime is loop-agnostic (its own I/O thread),
so a module-scoped runtime serves function-scoped event loops."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator

import pytest

from cave_tui.runtime.kernel import IPyKernelRuntime


def make_runtime(**kwargs) -> IPyKernelRuntime:
    kwargs.setdefault("interrupt_grace", 1.0)
    kwargs.setdefault("cell_timeout", 60)
    return IPyKernelRuntime(**kwargs)


@pytest.fixture(scope="module")
def shared_kernel() -> Iterator[IPyKernelRuntime]:
    runtime = make_runtime()
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


@pytest.fixture
async def kernel(shared_kernel: IPyKernelRuntime) -> IPyKernelRuntime:
    """The shared kernel, reset to an empty namespace."""
    await shared_kernel.reset()
    for name in list(shared_kernel.injected):
        await shared_kernel.delete(name)
    return shared_kernel


def nobody_processes() -> list[int]:
    """Processes owned by `nobody` (what a kernel runs as when the host is root)."""
    pids = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == 65534:
                    pids.append(int(name))
            except OSError:
                pass
    return pids
