"""A malformed line written raw to `cave mcp`'s stdin gets a JSON-RPC error, and the next
request is still answered: the server keeps serving."""

from __future__ import annotations

import json
import queue
import subprocess
import threading
from pathlib import Path
from typing import IO, Any

from tests.frontends.mcp.conftest import cave_mcp_command, cave_mcp_env

DEADLINE = 60.0  # seconds for one answer on a loaded machine


class RawClient:
    """JSON-RPC lines written to, and read from, a real `cave mcp` process (OS pipes)."""

    def __init__(self, folder: Path, *flags: str) -> None:
        sessions = str(folder / "sessions")
        command = cave_mcp_command("--in-process", "--sessions-dir", sessions, *flags)
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=(folder / "stderr.txt").open("wb"),  # what the server says, for the tests
            env=cave_mcp_env(),
            cwd=folder,
        )
        self.lines: queue.Queue[bytes] = queue.Queue()
        assert self.process.stdout is not None
        threading.Thread(target=self._read, args=(self.process.stdout,), daemon=True).start()

    def _read(self, stdout: IO[bytes]) -> None:
        for line in stdout:
            self.lines.put(line)
        self.lines.put(b"")

    def send(self, line: str | dict[str, Any]) -> None:
        assert self.process.stdin is not None
        text = line if isinstance(line, str) else json.dumps(line)
        self.process.stdin.write(text.encode() + b"\n")
        self.process.stdin.flush()

    def answer(self) -> dict[str, Any]:
        """The next message with an id (a response), notifications skipped."""
        while True:
            line = self.lines.get(timeout=DEADLINE)
            assert line, "cave mcp closed its stdout"
            message: dict[str, Any] = json.loads(line)
            if "id" in message:
                return message


def test_malformed_lines_get_errors_and_the_server_goes_on(tmp_path: Path) -> None:
    client = RawClient(tmp_path)
    try:
        hello = {
            "protocolVersion": "2025-06-18",
            "capabilities": {},
            "clientInfo": {"name": "raw", "version": "0"},
        }
        client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
        assert "result" in client.answer()
        client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})

        client.send('{"jsonrpc": "2.0", "id": 2, "method": "tools/list"')  # cut short
        error = client.answer()
        assert error["id"] is None and error["error"]["code"] == -32700  # parse error

        client.send("[1, 2]")  # JSON, but no JSON-RPC message
        error = client.answer()
        assert error["id"] is None and error["error"]["code"] == -32600  # invalid request

        client.send({"jsonrpc": "2.0", "id": 3, "method": "no/such/method", "params": {}})
        error = client.answer()
        assert error["id"] == 3 and error["error"]["code"] == -32601  # method not found

        run = {"name": "run", "arguments": {"code": "6 * 7"}}
        client.send({"jsonrpc": "2.0", "id": 4, "method": "tools/call", "params": run})
        answer = client.answer()
        assert answer["id"] == 4
        assert answer["result"]["content"][0]["text"] == "Output:\n42"
        assert client.process.poll() is None
    finally:
        assert client.process.stdin is not None
        client.process.stdin.close()  # the client leaves: the server ends by itself
        code = client.process.wait(timeout=DEADLINE)
    assert code == 0
