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
