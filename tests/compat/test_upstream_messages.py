"""`agent.messages` holds upstream 0.8's message objects (`cave_tui.messages`), which are
also the `{"role", "content"}` dicts 0.7-era cave code and sessions read."""

from __future__ import annotations

import json

from cave_tui import CaveAgent
from cave_tui.agent.approval import SKIPPED_NOTE
from cave_tui.messages import (
    AssistantMessage,
    CodeExecutionMessage,
    ExecutionResultMessage,
    Message,
    MessageRole,
    SummaryMessage,
    SystemMessage,
    UserMessage,
    message_from_dict,
    to_wire,
)
from cave_tui.models import ScriptedModel
from cave_tui.session import SessionRecorder, rebuild_history, resume_session
from cave_tui.types import ExecutionResultMessage as TypesExecutionResultMessage
from tests.agent.compaction.conftest import summary_reply
from tests.compat.test_upstream_compaction import chat

CODE = "Summing.\n```python\ntotal = sum(range(4))\nprint(total)\n```"


async def _ran() -> CaveAgent:
    agent = CaveAgent(ScriptedModel([CODE, "The total is 6."]), display=False)
    await agent.run("add 0..3")
    return agent


async def test_a_08_script_picks_the_results_out_of_agent_messages_by_class():
    agent = await _ran()
    kinds = [type(m) for m in agent.messages]
    assert kinds == [
        SystemMessage,
        UserMessage,
        CodeExecutionMessage,
        ExecutionResultMessage,
        AssistantMessage,
    ]
    results = [m for m in agent.messages if isinstance(m, ExecutionResultMessage)]
    assert len(results) == 1 and "6" in results[0].content
    assert results[0].role is MessageRole.EXECUTION_RESULT and results[0].wire_role == "user"
    code = next(m for m in agent.messages if isinstance(m, CodeExecutionMessage))
    assert code.content == CODE and code.role is MessageRole.CODE_EXECUTION
    assert not any(isinstance(m, UserMessage) for m in results)  # a result is not the user's
    assert TypesExecutionResultMessage is ExecutionResultMessage  # 0.7's module, same class
    await agent.runtime.stop()


async def test_0_7_style_dict_reads_still_work():
    agent = await _ran()
    messages = agent.messages
    assert [m["role"] for m in messages] == ["system", "user", "assistant", "user", "assistant"]
    assert messages[1] == {"role": "user", "content": "add 0..3"}
    assert messages[-1].get("content") == "The total is 6."
    assert to_wire(messages) == json.loads(json.dumps(messages))  # written as plain dicts
    assert all(isinstance(m, dict) for m in agent.history)
    await agent.runtime.stop()


def test_content_is_one_value_under_both_names():
    message = ExecutionResultMessage("before")
    message["content"] = "after"
    assert message.content == "after"
    message.content = "again"
    assert message == {"role": "user", "content": "again"}


async def test_a_session_file_keeps_its_format_and_loads_typed(tmp_path):
    agent = CaveAgent(ScriptedModel([CODE, "The total is 6."]), display=False)
    recorder = SessionRecorder.create(tmp_path, title="typed", agent=agent)
    await recorder.run("add 0..3")
    await recorder.close()
    log = (recorder.dir / "events.jsonl").read_text().splitlines()
    records = [json.loads(line) for line in log]
    written = [r for r in records if r["type"] == "message"]
    assert [r["role"] for r in written] == ["user", "assistant", "user", "assistant"]
    assert rebuild_history(records) == agent.history

    fresh = CaveAgent(ScriptedModel([]), display=False)
    await resume_session(recorder.dir, fresh)
    kinds = [type(m) for m in fresh.history[:4]]
    assert kinds == [UserMessage, CodeExecutionMessage, ExecutionResultMessage, AssistantMessage]
    await agent.runtime.stop()
    await fresh.runtime.stop()


async def test_a_skipped_cell_is_answered_by_a_result():
    async def skip(code: str) -> str | None:
        return None

    agent = CaveAgent(ScriptedModel([CODE, "Not run."]), display=False, approve=skip)
    await agent.run("add 0..3")
    kinds = [type(m) for m in agent.history]
    assert kinds == [UserMessage, CodeExecutionMessage, ExecutionResultMessage, AssistantMessage]
    assert agent.history[2].content == SKIPPED_NOTE
    await agent.runtime.stop()


async def test_add_message_appends_what_upstream_users_append():
    agent = CaveAgent(ScriptedModel([]), display=False)
    agent.add_message(UserMessage("hello"))
    agent.add_message({"role": "assistant", "content": "hi"})
    assert [type(m) for m in agent.messages] == [SystemMessage, UserMessage, AssistantMessage]
    assert isinstance(agent.history[0], Message) and agent.history[0].content == "hello"
    await agent.runtime.stop()


async def test_a_compaction_summary_is_a_summary_message():
    from cave_tui.compaction import recover_from_overflow

    summariser = ScriptedModel([summary_reply("Older turns added numbers.")] * 4)
    messages = [SystemMessage("You are terse."), *(message_from_dict(m) for m in chat(8))]
    out = await recover_from_overflow(messages, summariser, context_window=2000)
    summaries = [m for m in out if isinstance(m, SummaryMessage)]
    assert len(summaries) == 1 and "Older turns added numbers." in summaries[0].body
