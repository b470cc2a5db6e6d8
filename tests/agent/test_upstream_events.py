"""Upstream's `types` module and the events `stream_events()` yields, as upstream names them."""

from __future__ import annotations

import asyncio

from cave_tui import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.compaction import CompactionState, compact_if_needed
from cave_tui.models import ScriptedModel
from cave_tui.parsing import Segment, SegmentType, StreamingTextParser
from cave_tui.runtime import IPythonRuntime
from cave_tui.types import (
    AssistantMessage,
    CodeExecutionMessage,
    Event,
    EventType,
    ExecutionResultMessage,
    Message,
    MessageRole,
    SystemMessage,
    UserMessage,
)

# upstream `EventType` (cave_agent/types.py): member name -> value
UPSTREAM_EVENT_TYPES = {
    "TEXT": "text",
    "CODE": "code",
    "EXECUTION_OUTPUT": "execution_output",
    "EXECUTION_ERROR": "execution_error",
    "EXECUTION_OUTPUT_EXCEEDED": "execution_output_exceeded",
    "FINAL_RESPONSE": "final_response",
    "MAX_STEPS_REACHED": "max_steps_reached",
    "SECURITY_ERROR": "security_error",
    "COMPACTING": "compacting",
    "COMPACTED": "compacted",
}


def test_event_types_have_upstreams_names_and_strings():
    for name, value in UPSTREAM_EVENT_TYPES.items():
        assert EventType[name].value == value
    assert EventType is ev.EventType and Event is ev.Event


def test_event_is_built_as_upstream_builds_it():
    event = Event(EventType.TEXT, "hello")
    assert event.type is EventType.TEXT and event.content == "hello"


def test_message_roles_and_classes():
    assert [r.value for r in MessageRole] == [
        "system", "user", "assistant", "code_execution", "execution_result"
    ]  # fmt: skip
    cases = [
        (SystemMessage, MessageRole.SYSTEM, "system"),
        (UserMessage, MessageRole.USER, "user"),
        (AssistantMessage, MessageRole.ASSISTANT, "assistant"),
        (CodeExecutionMessage, MessageRole.CODE_EXECUTION, "assistant"),
        (ExecutionResultMessage, MessageRole.EXECUTION_RESULT, "user"),
    ]
    for cls, role, provider_role in cases:
        message = cls("text")
        assert isinstance(message, Message)
        assert message.role is role and message.content == "text"
        assert message.to_dict() == {"role": provider_role, "content": "text"}
    assert Message("x", MessageRole.USER).role is MessageRole.USER


async def test_agent_accepts_upstream_messages_as_history():
    model = ScriptedModel(["The answer is 4."])
    agent = CaveAgent(
        model,
        runtime=IPythonRuntime(),
        messages=[
            UserMessage("compute 2+2"),
            CodeExecutionMessage("```python\nprint(2+2)\n```"),
            ExecutionResultMessage("4"),
        ],
    )
    assert [m["role"] for m in agent.history] == ["user", "assistant", "user"]
    await agent.run("and again?")
    roles = {m["role"] for m in model.requests[0]}
    assert roles <= {"system", "user", "assistant"}


async def test_stream_events_uses_upstream_strings_for_upstream_kinds():
    model = ScriptedModel(["Let me look.\n```python\nprint(6 * 7)\n```", "It is 42."])
    agent = CaveAgent(model, runtime=IPythonRuntime(), final_answer=False)
    seen = [event async for event in agent.stream_events("what is 6*7?")]
    values = [e.type.value for e in seen]
    for kind in ("text", "code", "execution_output", "final_response"):
        assert kind in values
    code = next(e for e in seen if e.type is EventType.CODE)
    assert code.content.strip() == "print(6 * 7)"
    output = next(e for e in seen if e.type is EventType.EXECUTION_OUTPUT)
    assert "42" in output.content
    # Cave-only kinds (and 0.8's `stopped`, last) come as well; an upstream 0.7 consumer
    # that matches on type ignores them.
    assert set(values) - set(UPSTREAM_EVENT_TYPES.values()) <= {
        "user", "step", "output", "usage", "notice", "retry", "stopped"
    }  # fmt: skip
    assert values[-1] == "stopped"


async def test_security_error_event_keeps_its_upstream_string():
    from cave_tui.security import ImportRule, SecurityChecker

    runtime = IPythonRuntime(security_checker=SecurityChecker([ImportRule({"os"})]))
    model = ScriptedModel(["```python\nimport os\n```", "Cannot."])
    agent = CaveAgent(model, runtime=runtime, final_answer=False)
    values = [e.type.value async for e in agent.stream_events("list files")]
    assert "security_error" in values


def _segments(text: str, step: int) -> list[Segment]:
    parser = StreamingTextParser()
    out: list[Segment] = []
    for i in range(0, len(text), step):
        out += parser.process_chunk(text[i : i + step])
    return out + parser.flush()


def test_streaming_parser_splits_text_and_code_however_it_is_chunked():
    text = "First\n```python\nx = 1\n```\nMiddle\n```python\nprint(x)\n```\nEnd"
    for step in (1, 2, 5, len(text)):
        segments = _segments(text, step)
        codes = [s.content for s in segments if s.type is SegmentType.CODE]
        prose = "".join(s.content for s in segments if s.type is SegmentType.TEXT)
        assert codes == ["x = 1", "print(x)"]
        assert prose == "First\n\nMiddle\n\nEnd"


def test_streaming_parser_streams_plain_text_at_once_and_flushes_an_open_block():
    parser = StreamingTextParser()
    assert [s.content for s in parser.process_chunk("Hi")] == ["Hi"]
    assert [s.content for s in parser.process_chunk(" ```python\nprint(1)")] == [" "]
    assert not parser.is_first_code_block_completed()
    assert [(s.type, s.content) for s in parser.flush()] == [(SegmentType.CODE, "print(1)")]


def test_streaming_parser_does_not_cut_a_block_at_backticks_inside_a_string():
    text = '```python\ns = """\n```\n"""\nprint(s)\n```\ndone'
    segments = _segments(text, 3)
    assert [s.content for s in segments if s.type is SegmentType.CODE] == [
        's = """\n```\n"""\nprint(s)'
    ]
    assert "".join(s.content for s in segments if s.type is SegmentType.TEXT) == "\ndone"


def test_streaming_parser_other_languages_are_text():
    segments = _segments("```bash\nls\n``` and ```pythonic", 4)
    assert all(s.type is SegmentType.TEXT for s in segments)
    assert "".join(s.content for s in segments) == "```bash\nls\n``` and ```pythonic"


def test_compact_if_needed_leaves_a_short_conversation_alone():
    messages: list[Message] = [SystemMessage("sys"), UserMessage("hi")]
    state = CompactionState()
    out, tier = asyncio.run(compact_if_needed(messages, ScriptedModel([]), state))
    assert out is messages and tier is None


def test_compact_if_needed_clears_old_results_first():
    messages: list[Message] = [SystemMessage("You are helpful.")]
    for i in range(12):
        messages.append(CodeExecutionMessage(f"```python\nprint({i})\n```"))
        messages.append(ExecutionResultMessage(f"result {i} " + "word " * 400))
    messages.append(UserMessage("and now?"))
    state = CompactionState()
    out, tier = asyncio.run(
        compact_if_needed(messages, ScriptedModel([]), state, context_window=4_000)
    )
    assert tier == "microcompact"
    assert out[0] is messages[0] and out[-1] is messages[-1]
    assert all(isinstance(m, Message) for m in out)
    assert sum(len(m.content) for m in out) < sum(len(m.content) for m in messages)
    assert state.consecutive_failures == 0


async def test_with_display_passes_events_through_and_prints_them(capsys):
    from cave_tui.display import render_events, render_user_prompt, with_display

    async def events():
        yield Event(EventType.TEXT, "Thinking about it.\n")
        yield ev.CodeEvent(content="print(1)", code="print(1)", step=1)
        yield ev.ExecutionOutputEvent(content="1", output="1\n", step=1)
        yield Event(EventType.FINAL_RESPONSE, "done")

    seen = [e async for e in with_display(events())]
    assert [e.type for e in seen] == [
        EventType.TEXT, EventType.CODE, EventType.EXECUTION_OUTPUT, EventType.FINAL_RESPONSE
    ]  # fmt: skip
    await render_events(events())
    render_user_prompt("what is 1?")
    out = capsys.readouterr().out
    assert "Thinking about it." in out and "print(1)" in out and "what is 1?" in out
