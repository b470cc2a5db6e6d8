"""`cave acp` driven by the SDK's client over stdio: a session, a prompt whose text streams,
a cell as a tool call with its output, a slash command, the commands advertised."""

from __future__ import annotations

from pathlib import Path

from acp import PROTOCOL_VERSION, text_block
from acp.schema import AvailableCommandsUpdate, SessionInfoUpdate

from tests.frontends.acp.conftest import RecordingClient, cave_acp, content_text, scripted

CELL_REPLY = "I will compute it.\n```python\nanswer = 6 * 7\nprint('answer is', answer)\n```"
FINAL = (
    "The answer is 42, as the cell printed: six times seven, computed in the live namespace "
    "and kept there as `answer` for the next question."
)


async def test_a_prompt_streams_text_and_shows_its_cell_as_a_tool_call(tmp_path: Path) -> None:
    client = RecordingClient()
    model = scripted(tmp_path, [CELL_REPLY, FINAL])
    async with cave_acp(tmp_path, client, "--model", model) as conn:
        session = await conn.new_session(cwd=str(tmp_path))
        await client.wait_for(lambda: client.of(AvailableCommandsUpdate))
        (commands,) = client.of(AvailableCommandsUpdate)
        names = {c.name for c in commands.available_commands}
        assert {"vars", "inject", "retrieve", "load", "sessions"} <= names
        assert "quit" not in names  # only cave's own screens can

        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("6 times 7?")])
        assert reply.stop_reason == "end_turn"
        # The text came as several chunks, as the model streamed it.
        chunks = [u for u in client.updates if type(u).__name__ == "AgentMessageChunk"]
        assert len(chunks) >= 3
        assert "I will compute it." in client.text() and FINAL in client.text()
        (call,) = client.calls()
        assert call.kind == "execute" and call.status == "pending"
        assert "answer = 6 * 7" in content_text(call)
        (outcome,) = client.outcomes()
        assert outcome.tool_call_id == call.tool_call_id and outcome.status == "completed"
        assert "answer is 42" in content_text(outcome)
        assert "answer = 6 * 7" in content_text(outcome)  # the code stays shown
        # The status: the model and the runtime's memory.
        info = client.of(SessionInfoUpdate)[-1]
        assert info.title is not None and info.title.startswith("cave · scripted")
        assert info.field_meta is not None and info.field_meta["cave"]["memory"]

        # A slash command runs through cave's command registry; its lines are the answer.
        before = len(client.updates)
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("/vars")])
        assert reply.stop_reason == "end_turn"
        said = "".join(
            u.content.text
            for u in client.updates[before:]
            if type(u).__name__ == "AgentMessageChunk"
        )
        assert "answer" in said and "int" in said
        before = len(client.updates)
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("/nosuch")])
        said = "".join(
            u.content.text
            for u in client.updates[before:]
            if type(u).__name__ == "AgentMessageChunk"
        )
        assert "Unknown command /nosuch" in said


async def test_a_failing_cell_is_a_failed_tool_call(tmp_path: Path) -> None:
    client = RecordingClient()
    model = scripted(tmp_path, ["```python\n1/0\n```", "It failed."])
    async with cave_acp(tmp_path, client, "--model", model) as conn:
        session = await conn.new_session(cwd=str(tmp_path))
        reply = await conn.prompt(session_id=session.session_id, prompt=[text_block("go")])
        assert reply.stop_reason == "end_turn"
        (outcome,) = client.outcomes()
        assert outcome.status == "failed"
        assert "ZeroDivisionError" in content_text(outcome)
        assert PROTOCOL_VERSION == 1


async def test_a_bang_prompt_is_the_users_own_cell_with_no_model(tmp_path: Path) -> None:
    """`!code` runs as in the app: the user's cell (the guard does not read it), no model."""
    client = RecordingClient()
    async with cave_acp(tmp_path, client) as conn:  # no --model: none is needed
        sid = (await conn.new_session(cwd=str(tmp_path))).session_id
        reply = await conn.prompt(session_id=sid, prompt=[text_block("!import os\nprint(6 * 7)")])
        assert reply.stop_reason == "end_turn"
        (call,) = client.calls()
        assert call.kind == "execute" and "print(6 * 7)" in content_text(call)
        (outcome,) = client.outcomes()
        assert outcome.status == "completed" and "42" in content_text(outcome)
