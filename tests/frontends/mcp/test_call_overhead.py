"""What a `run` call costs besides the cell: no worker-thread hop on the way.

A thread hop per call (the SDK runs a sync resolver and its stdio reads and writes on
worker threads) was most of `cave mcp`'s per-call overhead on a busy machine
(bench/protocols.py). Here: a `run` call is answered while every worker thread of the
loop is taken, and `cave mcp`'s stdio reads and writes its pipes with no worker thread.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import anyio
import anyio.to_thread
import pytest
from mcp import Client

from cave_tui.app.services import AppServices
from cave_tui.frontends.mcp.server import build_server
from cave_tui.runtime.ipython import IPythonRuntime
from tests.frontends.mcp.conftest import cave_mcp_env

DEADLINE = 30.0  # seconds for one answer on a loaded machine


@pytest.mark.asyncio
async def test_run_is_answered_with_every_worker_thread_taken() -> None:
    services = AppServices(runtime=IPythonRuntime())
    await services.start()
    try:
        release = anyio.Event()
        limiter = anyio.to_thread.current_default_thread_limiter()
        async with Client(build_server(services)) as client, anyio.create_task_group() as group:

            async def hold() -> None:
                await anyio.to_thread.run_sync(lambda: anyio.from_thread.run(release.wait))

            for _ in range(int(limiter.total_tokens)):
                group.start_soon(hold)
            while limiter.borrowed_tokens < limiter.total_tokens:
                await anyio.sleep(0.01)
            with anyio.fail_after(DEADLINE):
                result = await client.call_tool("run", {"code": "1+1"})
            release.set()
        assert not result.is_error
        assert "2" in result.content[0].text  # type: ignore[union-attr]
    finally:
        await services.shutdown()


SERVE_ONE = """
import asyncio, sys, threading
from mcp.shared.message import SessionMessage
from mcp_types import JSONRPCResponse
from cave_tui.frontends.mcp.transport import stdio_streams

async def main():
    async with stdio_streams() as (read, write):
        message = await read.receive()
        request = message.message
        await write.send(SessionMessage(JSONRPCResponse(jsonrpc="2.0", id=request.id, result={})))
        await asyncio.sleep(0.2)
        await write.aclose()  # as the server does when it ends
        names = [t.name for t in threading.enumerate() if t is not threading.main_thread()]
        sys.stderr.write("threads: " + ",".join(names) + "\\n")

asyncio.run(main())
"""


def test_stdio_pipes_are_read_and_written_without_worker_threads(tmp_path: Path) -> None:
    process = subprocess.run(
        [sys.executable, "-c", SERVE_ONE],
        input=json.dumps({"jsonrpc": "2.0", "id": 7, "method": "ping"}) + "\n",
        capture_output=True,
        text=True,
        env=cave_mcp_env(),
        cwd=tmp_path,
        timeout=DEADLINE,
    )
    assert process.returncode == 0, process.stderr
    assert json.loads(process.stdout) == {"jsonrpc": "2.0", "id": 7, "result": {}}
    threads = process.stderr.rpartition("threads: ")[2].strip()
    assert threads == "", f"worker threads served the pipes: {threads}"
