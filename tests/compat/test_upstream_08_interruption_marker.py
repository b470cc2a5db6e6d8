"""A run that is cancelled, or whose event stream is closed before its end, leaves upstream
0.8's "[Request interrupted by user]" user message last in the history; a run that ended
leaves none, and the next request still alternates (the marker joins the next task)."""

from __future__ import annotations

import asyncio
from contextlib import aclosing

from cave_tui import CaveAgent
from cave_tui.agent.conversation import STEP_INTERRUPTED
from cave_tui.agent.messages import merge_consecutive
from cave_tui.events import CodeEvent
from cave_tui.messages import ExecutionResultMessage, MessageRole, UserMessage
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime

CODE = "```python\nprint(1)\n```"


def test_the_marker_is_upstreams_text() -> None:
    assert STEP_INTERRUPTED == "[Request interrupted by user]"


async def test_closing_the_stream_before_the_cell_runs_marks_the_code_reply() -> None:
    runtime = IPythonRuntime()
    agent = CaveAgent(ScriptedModel([CODE, "done"]), runtime=runtime, display=False)
    stream = agent.stream_events("q")

    async with aclosing(stream):
        async for event in stream:
            if isinstance(event, CodeEvent):
                break

    last = agent.history[-1]
    assert last.content == STEP_INTERRUPTED
    assert type(last) is ExecutionResultMessage  # the code reply it follows has its result


async def test_a_stream_closed_before_any_reply_marks_the_request() -> None:
    agent = CaveAgent(ScriptedModel(["working", "done"]), runtime=IPythonRuntime(), display=False)
    stream = agent.stream_events("old request")
    await stream.__anext__()
    await stream.aclose()

    await agent.run("new request")

    users = [m.content for m in agent.history if type(m) is UserMessage]
    assert users == ["old request", STEP_INTERRUPTED, "new request"]
    request = merge_consecutive(agent.history)  # what the provider is sent: roles alternate
    assert request[0]["content"] == f"old request\n\n{STEP_INTERRUPTED}\n\nnew request"


async def test_a_cancelled_cell_ends_with_the_marker_after_its_result() -> None:
    class Hanging(IPythonRuntime):
        async def execute(self, code: str):  # type: ignore[override]
            await asyncio.sleep(60)

    agent = CaveAgent(ScriptedModel([CODE]), runtime=Hanging(), display=False)
    task = asyncio.create_task(agent.run("q"))
    for _ in range(500):
        if agent.in_cell:
            break
        await asyncio.sleep(0.01)
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass

    roles = [m.role for m in agent.history]
    code, result, user = MessageRole.CODE_EXECUTION, MessageRole.EXECUTION_RESULT, MessageRole.USER
    assert roles[-3:] == [code, result, user]
    assert agent.history[-1].content == STEP_INTERRUPTED


async def test_a_finished_run_leaves_no_marker_even_when_its_stream_is_closed() -> None:
    agent = CaveAgent(ScriptedModel(["the answer"]), runtime=IPythonRuntime(), display=False)
    stream = agent.stream_events("q")
    async with aclosing(stream):
        events = [e async for e in stream]
    await stream.aclose()

    assert events[-1].content == "the answer"
    assert all(m.content != STEP_INTERRUPTED for m in agent.history)
