"""`cave run` against an endpoint that cannot answer: one attempt, the URL named, exit 2."""

from __future__ import annotations

import json
import socket

from tests.reliability.helpers import cave


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def test_cave_run_names_an_unreachable_api_base_without_retrying(tmp_path):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    result = cave(
        "run", "hello", "--model", "openai/m", "--api-base", url, "--json", cwd=tmp_path,
        extra_env={"OPENAI_API_KEY": "local"},
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines() if line.startswith("{")]
    assert not [e for e in events if e["type"] == "retry"]
    (error,) = [e for e in events if e["type"] == "error"]
    assert error["kind"] == "connection"
    assert url in error["content"] and "connection refused" in error["content"]
