"""A cell whose caller is cancelled by an anyio cancel scope (as the MCP SDK cancels a
request: again at every await) is interrupted all the same; the next cell runs."""

from __future__ import annotations

import anyio

from cave_tui.runtime.ipython import IPythonRuntime


async def test_a_cell_cancelled_by_a_cancel_scope_is_interrupted() -> None:
    runtime = IPythonRuntime(memory_limit=None)
    try:
        await runtime.execute("n = 41")
        with anyio.move_on_after(0.3):
            await runtime.execute("import time\nwhile True:\n    time.sleep(0.01)")
        result = await runtime.execute("n + 1")
        assert result.success, result.error_text
        assert result.output == "42\n"
    finally:
        await runtime.stop()


async def test_the_stop_of_a_cancelled_cell_never_reaches_the_next_cell(tmp_path) -> None:
    """The cancelled call returns before its cell has ended (cancelled again while it
    waits); the stop still running for that cell must not interrupt the next one."""
    runtime = IPythonRuntime(memory_limit=None)
    started = tmp_path / "started"
    stubborn = (  # swallows interrupts for 0.3 s, then ends by itself
        "import time\n"
        f"open({str(started)!r}, 'w').close()\n"
        "end = time.monotonic() + 0.3\n"
        "while time.monotonic() < end:\n"
        "    try:\n"
        "        time.sleep(0.01)\n"
        "    except KeyboardInterrupt:\n"
        "        pass\n"
    )
    try:
        async with anyio.create_task_group() as group:
            group.start_soon(runtime.execute, stubborn)
            while not started.exists():
                await anyio.sleep(0.01)
            group.cancel_scope.cancel()
        result = await runtime.execute(
            "import time\nfor i in range(40):\n    time.sleep(0.01)\nprint('done')"
        )
        assert result.success, result.error_text
        assert result.output == "done\n"
    finally:
        await runtime.stop()


async def test_a_cell_timed_out_while_queued_never_runs_and_stops_no_other() -> None:
    """Two callers waiting on one cell both submit when it ends: the second queues behind
    the first. Its timeout stops it before it begins, and not the cell then running."""
    runtime = IPythonRuntime(memory_limit=None)
    results: dict[str, object] = {}

    async def run(key: str, code: str, timeout: float | None = None) -> None:
        results[key] = await runtime.execute(code, timeout=timeout)

    try:
        async with anyio.create_task_group() as group:
            group.start_soon(run, "first", "import time\ntime.sleep(0.3)")
            await anyio.sleep(0.05)
            group.start_soon(run, "second", "time.sleep(0.4)\nprint('second ran')")
            await anyio.sleep(0.05)
            group.start_soon(run, "queued", "queued_ran = True", 0.15)
        second, queued = results["second"], results["queued"]
        assert second.success and second.output == "second ran\n", second.error_text
        assert not queued.success and queued.timed_out
        check = await runtime.execute("print('queued_ran' in dir())")
        assert check.output == "False\n"
    finally:
        await runtime.stop()
