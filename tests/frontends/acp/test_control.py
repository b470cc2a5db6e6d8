"""`cave acp` over stdio: a permission asked and denied, a cancel mid-cell, a recorded session
loaded, malformed input answered while the server keeps serving."""

from __future__ import annotations

import asyncio
import json
import sys
import time
from pathlib import Path

import pytest
from acp import RequestError, text_block
from acp.schema import CurrentModeUpdate, UserMessageChunk

from tests.frontends.acp.conftest import (
    RecordingClient,
    cave_acp,
    cave_env,
    content_text,
    scripted,
)


async def test_a_denied_permission_skips_the_cell(tmp_path: Path) -> None:
    client = RecordingClient(allow=False)
    replies = ["```python\nmarker = 'ran'\n```", "Skipped, as you asked."]
    model = scripted(tmp_path, replies)
    async with cave_acp(tmp_path, client, "--model", model, "--approve", "ask") as conn:
        session = await conn.new_session(cwd=str(tmp_path))
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        assert reply.stop_reason == "end_turn"
        (asked,) = client.asked
        assert "marker = 'ran'" in content_text(asked)  # the code is shown
        (call,) = client.calls()
        assert asked.tool_call_id == call.tool_call_id
        (outcome,) = client.outcomes()
        assert outcome.status == "failed" and "skipped" in content_text(outcome)
        await conn.prompt(session_id=session.session_id, prompt=[text_block("/vars")])
        assert "marker" not in client.text()  # it never ran


async def test_cancel_interrupts_the_cell_and_keeps_the_namespace(tmp_path: Path) -> None:
    client = RecordingClient()
    replies = [
        "```python\nkept = 41\n```",
        "```python\nimport time\nwhile True:\n    time.sleep(0.05)\n```",
        "```python\nafter = kept + 1\n```",
        "Done.",
    ]
    model = scripted(tmp_path, replies)
    async with cave_acp(tmp_path, client, "--model", model, "--policy", "trusted") as conn:
        session = await conn.new_session(cwd=str(tmp_path))
        sid = session.session_id
        prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await client.wait_for(lambda: len(client.calls()) == 2)
        await asyncio.sleep(0.5)  # the sleep is running
        started = time.monotonic()
        await conn.cancel(session_id=sid)
        async with asyncio.timeout(15):
            reply = await prompt
        assert reply.stop_reason == "cancelled"
        assert time.monotonic() - started < 15
        outcomes = client.outcomes()
        assert [o.status for o in outcomes] == ["completed", "failed"]
        # The cell really stopped (the next one runs at once) and the namespace survived.
        async with asyncio.timeout(15):
            await conn.prompt(session_id=sid, prompt=[text_block("next")])
        assert [o.status for o in client.outcomes()] == ["completed", "failed", "completed"]
        before = len(client.updates)
        await conn.prompt(session_id=sid, prompt=[text_block("/vars")])
        said = client.text(before)
        assert "kept" in said and "after" in said


async def test_a_cell_that_cannot_be_stopped_is_said_to_run_on(tmp_path: Path) -> None:
    """In process, a cell inside one long native call cannot be interrupted: the tool call
    says so instead of claiming the cell stopped."""
    client = RecordingClient()
    model = scripted(tmp_path, ["```python\nimport time\ntime.sleep(6)\n```"])
    async with cave_acp(tmp_path, client, "--model", model, "--policy", "trusted") as conn:
        sid = (await conn.new_session(cwd=str(tmp_path))).session_id
        prompt = asyncio.ensure_future(conn.prompt(session_id=sid, prompt=[text_block("go")]))
        await client.wait_for(lambda: len(client.calls()) == 1)
        await asyncio.sleep(0.5)
        await conn.cancel(session_id=sid)
        async with asyncio.timeout(15):
            assert (await prompt).stop_reason == "cancelled"
        (outcome,) = client.outcomes()
        assert outcome.status == "failed"
        said = str(outcome.raw_output)
        assert "still running" in said and "was stopped" not in said


async def test_a_recorded_session_is_loaded_and_replayed(tmp_path: Path) -> None:
    first = RecordingClient()
    model = scripted(tmp_path, ["```python\nsaved = 'from before'\n```", "Saved it."])
    async with cave_acp(tmp_path, first, "--model", model) as conn:
        session = await conn.new_session(cwd=str(tmp_path))
        await conn.prompt(session_id=session.session_id, prompt=[text_block("save it")])
    recorded = session.session_id

    client = RecordingClient()
    async with cave_acp(tmp_path, client, "--model", model) as conn:
        await conn.load_session(cwd=str(tmp_path), session_id=recorded)
        users = [u.content.text for u in client.of(UserMessageChunk)]
        assert users == ["save it"]
        (call,) = client.calls()
        assert "saved = 'from before'" in content_text(call)
        assert [o.status for o in client.outcomes()] == ["completed"]
        assert "Saved it." in client.text()
        before = len(client.updates)
        await conn.prompt(session_id=recorded, prompt=[text_block("/vars")])
        said = client.text(before)
        assert "saved" in said  # its namespace came back


async def test_malformed_lines_are_answered_and_the_server_keeps_serving(tmp_path: Path) -> None:
    process = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "cave_tui", "acp", "--in-process",
        "--sessions-dir", str(tmp_path / "sessions"),
        stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, env=cave_env(),
        cwd=tmp_path,
    )  # fmt: skip
    assert process.stdin is not None and process.stdout is not None
    lines = [
        b"this is not json\n",
        b"[1, 2, 3]\n",
        b'{"jsonrpc": "2.0", "id": 7, "method": "session/prompt", "params": {"nope": 1}}\n',
        b'{"jsonrpc": "2.0", "id": 8, "method": "no/such"}\n',
        b'{"jsonrpc": "2.0", "id": 9, "method": "initialize", "params": {"protocolVersion": 1}}\n',
    ]
    for line in lines:
        process.stdin.write(line)
    await process.stdin.drain()
    answers = []
    async with asyncio.timeout(60):
        while len(answers) < 5:
            answers.append(json.loads(await process.stdout.readline()))
    assert [a.get("id") for a in answers] == [None, None, 7, 8, 9]
    assert answers[0]["error"]["code"] == -32700
    assert answers[1]["error"]["code"] == -32600
    assert answers[2]["error"]["code"] == -32602
    assert answers[3]["error"]["code"] == -32601
    assert answers[4]["result"]["agentCapabilities"]["loadSession"] is True
    process.stdin.close()
    async with asyncio.timeout(30):
        assert await process.wait() == 0


async def test_the_approval_setting_is_the_sessions_mode(tmp_path: Path) -> None:
    """A front end's mode picker: the modes offered with the session (auto, ask), one set
    by `session/set_mode` makes the next cell a permission request, and `/approve` changed
    in a prompt is a `current_mode_update`. An unknown mode is refused."""
    client = RecordingClient(allow=False)
    replies = ["```python\nmarker = 'ran'\n```", "Skipped, as you asked."]
    model = scripted(tmp_path, replies)
    async with cave_acp(tmp_path, client, "--model", model) as conn:
        session = await conn.new_session(cwd=str(tmp_path))
        sid = session.session_id
        assert session.modes is not None and session.modes.current_mode_id == "auto"
        assert [mode.id for mode in session.modes.available_modes] == ["auto", "ask"]
        await conn.set_session_mode(session_id=sid, mode_id="ask")
        await conn.prompt(session_id=sid, prompt=[text_block("go")])
        (asked,) = client.asked  # asked, denied: the cell never ran
        assert "marker = 'ran'" in content_text(asked)
        with pytest.raises(RequestError):
            await conn.set_session_mode(session_id=sid, mode_id="yolo")
        await conn.prompt(session_id=sid, prompt=[text_block("/approve auto")])
        (update,) = client.of(CurrentModeUpdate)
        assert update.current_mode_id == "auto"
