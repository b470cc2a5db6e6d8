"""The kernel runtime streams a cell's output, reports namespace changes, lists every name."""

from __future__ import annotations

import asyncio
import time

from cave_tui.runtime.base import NamespaceChange
from cave_tui.runtime.items import Variable


async def until(condition, timeout: float = 30.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        await asyncio.sleep(0.01)


async def test_output_streams_before_the_cell_ends(kernel):
    code = "import time\nprint('ready', flush=True)\nwhile True:\n    time.sleep(0.01)"
    chunks: list[str] = []
    task = asyncio.ensure_future(kernel.execute(code, on_output=chunks.append))
    await until(lambda: "ready" in "".join(chunks))
    assert not task.done()  # seen while the cell runs
    await kernel.interrupt()
    result = await task
    assert result.interrupted and result.output.startswith("ready\n")
    assert "".join(chunks).startswith("ready\n")


async def test_changes_are_reported(kernel):
    heard: list[NamespaceChange] = []
    unsubscribe = kernel.add_namespace_listener(heard.append)
    try:
        await kernel.execute("x = 1")
        assert heard[-1].changed == ("x",)
        await kernel.ainject(Variable("given", [1, 2]))
        assert heard[-1] == NamespaceChange(changed=("given",))
        await kernel.delete("x")
        assert heard[-1] == NamespaceChange(deleted=("x",))
        await kernel.reset()
        assert heard[-1].everything
    finally:
        unsubscribe()


async def test_the_listing_is_not_capped_at_the_summarys_500(kernel):
    await kernel.execute("for _i in range(600):\n    globals()[f'w{_i}'] = _i")
    assert len(await kernel.namespace_summary()) == 500
    listing = await kernel.namespace_listing()
    assert len(listing) == 600 and listing[-1].name == "w599"
