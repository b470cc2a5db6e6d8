"""The in-process runtime reports every namespace change, streams output, lists every name."""

from __future__ import annotations

import asyncio
import threading
import time

from cave_tui.runtime.base import NamespaceChange
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Variable


async def until(condition, timeout: float = 10.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < deadline, "condition not met before the deadline"
        await asyncio.sleep(0.01)


async def test_every_kind_of_change_is_reported():
    rt = IPythonRuntime()
    heard: list[NamespaceChange] = []
    unsubscribe = rt.add_namespace_listener(heard.append)
    await rt.execute("a = 1\nb = [1]")
    await until(lambda: len(heard) == 1)  # the cell's end, from the cell's thread
    assert set(heard[-1].changed) == {"a", "b"} and not heard[-1].everything
    rt.inject(Variable("given", 3))
    assert heard[-1] == NamespaceChange(changed=("given",))
    await rt.delete("a")
    assert heard[-1] == NamespaceChange(deleted=("a",))
    await rt.reset()
    assert heard[-1].everything
    unsubscribe()
    rt.inject(Variable("unheard", 1))
    assert all("unheard" not in c.changed for c in heard)
    await rt.stop()


async def test_a_cancelled_cell_reports_what_it_made():
    rt = IPythonRuntime()
    heard: list[NamespaceChange] = []
    rt.add_namespace_listener(heard.append)
    task = asyncio.ensure_future(rt.execute("early = 1\nimport time\nwhile True: time.sleep(0.01)"))
    await until(lambda: "early" in rt._ns)
    task.cancel()
    await asyncio.gather(task, return_exceptions=True)
    await until(lambda: bool(heard))
    assert heard[-1].everything and "early" in heard[-1].changed
    await rt.stop()


async def test_output_reaches_the_listener_while_the_cell_runs():
    rt = IPythonRuntime()
    gate = threading.Event()
    rt.inject(Variable("gate", gate))
    chunks: list[str] = []
    code = "print('ready', flush=True)\ngate.wait(30)\nprint('done')"
    task = asyncio.ensure_future(rt.execute(code, on_output=chunks.append))
    await until(lambda: "ready" in "".join(chunks))
    assert not task.done()
    gate.set()
    result = await task
    assert result.output == "ready\ndone\n" and "".join(chunks) == result.output
    await rt.stop()


async def test_the_listing_has_every_name_the_summary_stays_bounded():
    rt = IPythonRuntime()
    await rt.execute("for _i in range(10_021):\n    globals()[f'v{_i}'] = _i")
    assert len(await rt.namespace_summary()) == 10_000  # the prompt's, dumps', snapshots'
    listing = await rt.namespace_listing()
    assert len(listing) == 10_021 and listing[-1].name == "v10020"
    await rt.stop()
