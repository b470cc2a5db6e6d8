"""Upstream 0.8's `IPyKernelRuntime(iopub_timeout=...)`: the longest a cell may run in
the kernel (cave's `cell_timeout`); past it the cell is stopped, fails, and the kernel
takes the next cell at once."""

from __future__ import annotations

import time

from cave_tui.runtime import IPyKernelRuntime


async def test_a_cell_over_the_iopub_timeout_is_stopped_and_the_kernel_goes_on() -> None:
    runtime = IPyKernelRuntime(iopub_timeout=1.0)
    assert runtime.cell_timeout == 1.0
    try:
        slow = await runtime.execute("import time; time.sleep(60)")
        assert not slow.success and slow.timed_out
        started = time.monotonic()
        probe = await runtime.execute("print('probe')")
        assert probe.success and probe.stdout == "probe\n"
        assert time.monotonic() - started < 30  # generous: a shared, loaded machine
    finally:
        await runtime.stop()
