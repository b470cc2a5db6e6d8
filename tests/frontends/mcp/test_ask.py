"""`ask`: a whole turn of cave's own agent (`--model scripted:FILE`) over MCP: its answer
and the cells it ran, progress notifications at each step and cell, the namespace kept;
a client's cancel interrupts the turn's cell and the namespace survives."""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import anyio
from mcp import Client

from tests.frontends.mcp.conftest import cave_mcp
from tests.frontends.mcp.test_stdio_tools import text_of

REPLIES = """\
- |
  ```python
  answer = sum(range(10))
  print(answer)
  ```
- The sum is 45.
- |
  ```python
  import time
  open('started', 'w').close()
  while True:  # Python code: an interrupt stops it in process
      time.sleep(0.05)
  ```
"""


async def test_ask_runs_a_turn_with_progress_and_cancel(tmp_path: Path) -> None:
    (tmp_path / "replies.yaml").write_text(REPLIES)
    server = cave_mcp(tmp_path, "--in-process", "--model", "scripted:replies.yaml")
    told: list[str] = []

    async def progress(progress: float, total: float | None, message: str | None) -> None:
        told.append(message or "")

    async with Client(server, read_timeout_seconds=60) as client:
        listed = await client.list_tools()
        assert "ask" in {tool.name for tool in listed.tools}
        result = await client.call_tool(
            "ask", {"question": "what is the sum of 0..9?"}, progress_callback=progress
        )
        assert not result.is_error, text_of(result)
        text = text_of(result)
        assert text.startswith("The sum is 45.")
        assert "```python\nanswer = sum(range(10))\nprint(answer)\n```\nOutput:\n45" in text
        assert "step 1: asking the model" in told and "step 1: running cell 1" in told
        told.clear()
        result = await client.call_tool("run", {"code": "answer * 2"}, progress_callback=progress)
        assert text_of(result) == "Output:\n90"  # the turn's namespace is the client's
        assert told == ["running the cell"]  # and a heartbeat every 5 s on a long cell

        # A cancel from the client interrupts the turn's cell; the namespace survives.
        async with anyio.create_task_group() as group:
            group.start_soon(client.call_tool, "ask", {"question": "sleep"})
            deadline = time.monotonic() + 60
            while not (tmp_path / "started").exists():
                assert time.monotonic() < deadline, "the cell did not start"
                await asyncio.sleep(0.05)
            group.cancel_scope.cancel()  # the SDK sends notifications/cancelled
        with anyio.fail_after(60):
            result = await client.call_tool("run", {"code": "answer + 1"})
        assert text_of(result) == "Output:\n46", text_of(result)


async def test_ask_without_a_model_says_so(tmp_path: Path) -> None:
    async with Client(cave_mcp(tmp_path, "--in-process"), read_timeout_seconds=60) as client:
        result = await client.call_tool("ask", {"question": "anything"})
        assert result.is_error and "No model is configured" in text_of(result)
