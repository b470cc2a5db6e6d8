"""Issue 29, item 9: a model server that stalls mid-stream ends `cave run` within the idle
timeout (`--stream-idle-timeout`), with a message naming the model, its URL and the wait."""

from __future__ import annotations

import time

from tests.helpers.openai_server import ScriptedOpenAIServer
from tests.reliability.real_cave import cave


def test_cave_run_gives_up_on_a_stalled_stream_with_a_clear_error(tmp_path):
    with ScriptedOpenAIServer() as server:
        server.script.extend([("stall", 2), ("stall", 2), ("stall", 2)])
        started = time.monotonic()
        done = cave(
            "run",
            "hello",
            "--in-process",
            "--model",
            "openai/stall-model",
            "--api-base",
            server.base_url,
            "--stream-idle-timeout",
            "0.5",
            cwd=tmp_path,
            extra_env={"OPENAI_API_KEY": "local"},
            timeout=60,
        )
        took = time.monotonic() - started
    assert done.returncode == 2, (done.stdout, done.stderr)
    said = done.stdout + done.stderr
    assert "openai/stall-model" in said and server.base_url in said, said
    assert "nothing for 0.5 s" in said
    assert len(server.requests) == 2  # the stalled stream was asked again once, then given up
    assert took < 40
