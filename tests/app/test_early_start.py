"""`AppServices.begin_start`: the kernel boots while the front end is still importing (before
any event loop runs); `start()` then only waits for it, and the cell runs in that kernel."""

from __future__ import annotations

import asyncio
import time

from cave_tui.agent import events as ev
from cave_tui.app.services import AppServices
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.kernel import IPyKernelRuntime

DEADLINE = 60.0  # seconds for a kernel to boot on a loaded machine


def _kernel_pid(services: AppServices) -> int | None:
    runtime = services.runtime
    return runtime.kernel_pid if isinstance(runtime, IPyKernelRuntime) else None


def test_the_kernel_boots_before_the_event_loop_runs() -> None:
    services = AppServices(runtime_factory=lambda: IPyKernelRuntime(cell_timeout=60))
    services.begin_start()
    waited = time.monotonic() + DEADLINE
    while _kernel_pid(services) is None and time.monotonic() < waited:
        time.sleep(0.02)  # no event loop here: only the early boot can launch it
    booted = _kernel_pid(services)
    assert booted is not None, "no kernel was launched before start()"

    async def first_answer() -> str:
        try:
            await services.start()
            outputs = [
                event.content
                async for event in services.run_python("40 + 2")
                if isinstance(event, ev.ExecutionOutputEvent)
            ]
            assert _kernel_pid(services) == booted  # the same kernel, not a second one
            return outputs[-1]
        finally:
            await services.shutdown()

    assert "42" in asyncio.run(first_answer())


async def test_an_in_process_runtime_still_starts_in_start() -> None:
    runtime = IPythonRuntime()
    services = AppServices(runtime_factory=lambda: runtime)
    services.begin_start()
    await services.start()
    try:
        outputs = [
            event.content
            async for event in services.run_python("6 * 7")
            if isinstance(event, ev.ExecutionOutputEvent)
        ]
        assert "42" in outputs[-1]
    finally:
        await services.shutdown()
