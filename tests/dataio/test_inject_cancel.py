"""A cancel that comes once the file is loaded lets its injection finish whole."""

from __future__ import annotations

import asyncio

from cave_tui.dataio import inject_file
from cave_tui.runtime.ipython import IPythonRuntime


class AckingRuntime(IPythonRuntime):
    """Binds the value at once, then waits for an acknowledgement (as the kernel does)."""

    def __init__(self) -> None:
        super().__init__()
        self.binding = asyncio.Event()

    async def ainject(self, item) -> None:
        self.inject(item)
        self.binding.set()
        await asyncio.sleep(0.2)


async def test_a_cancel_during_the_injection_itself_is_too_late_to_stop_it(tmp_path):
    (tmp_path / "t.csv").write_text("a\n1\n2\n")
    runtime = AckingRuntime()
    task = asyncio.ensure_future(inject_file(runtime, tmp_path / "t.csv"))
    await runtime.binding.wait()
    task.cancel()
    injection = await task  # not cancelled: the caller records what is in the namespace
    assert injection.name == "t" and not task.cancelled()
    assert (await runtime.retrieve("t"))["a"].tolist() == [1, 2]
