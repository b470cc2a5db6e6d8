"""A client that leaves mid-cell: the cell is interrupted, the namespace it had is kept (the
exit's --dump holds it) and the server ends on its own, exit 0."""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.frontends.mcp.test_malformed_request import DEADLINE, RawClient


def test_client_leaving_mid_cell_interrupts_it_and_keeps_the_namespace(tmp_path: Path) -> None:
    client = RawClient(tmp_path, "--dump", str(tmp_path / "dump"))
    who = {"name": "r", "version": "0"}
    hello = {"protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": who}
    client.send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": hello})
    assert "result" in client.answer()
    client.send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    cell = "import time\nkept = 41 + 1\nopen('started', 'w').close()\ntime.sleep(600)"
    call = {"name": "run", "arguments": {"code": cell}}
    client.send({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": call})
    deadline = time.monotonic() + DEADLINE
    while not (tmp_path / "started").exists():  # the cell is running
        assert time.monotonic() < deadline, "the cell did not start"
        time.sleep(0.05)
    assert client.process.stdin is not None
    client.process.stdin.close()
    assert client.process.wait(timeout=DEADLINE) == 0
    (session,) = (tmp_path / "sessions").iterdir()
    records = [json.loads(line) for line in (session / "events.jsonl").read_text().splitlines()]
    (outcome,) = [r for r in records if r["type"] == "execution_error"]
    assert outcome["interrupted"] is True
    manifest = json.loads((tmp_path / "dump" / "manifest.json").read_text())
    assert "kept" in json.dumps(manifest)
    assert records[-1] == {**records[-1], "type": "closed", "status": "completed"}
    said = (tmp_path / "stderr.txt").read_text()
    assert said.count("cave: dumped 1 variables") == 1, said  # once, not once per front end
