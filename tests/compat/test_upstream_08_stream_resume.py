"""A stream that dies mid-reply is resumed as an output recovery, as 0.8 does.

The text read so far is kept (in the history, with the resume prompt) and the model is
asked to go on from it, instead of the run ending as a model error; a code block split
across the drop runs whole. A stream that dies before any text is not resumed.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from cave_tui.agent.core import CaveAgent
from cave_tui.agent.events import OutputRecoveryEvent
from cave_tui.agent.stop_reason import StopReason
from cave_tui.runtime import IPythonRuntime


class DroppingModel:
    """Upstream's interface: each reply is (text, whether the connection drops after it)."""

    def __init__(self, replies: list[tuple[str, bool]]) -> None:
        self.replies = replies
        self.requests: list[list[dict[str, str]]] = []

    async def call(self, messages: list[dict[str, str]]) -> str:
        raise NotImplementedError

    async def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[str]:
        self.requests.append([dict(m) for m in messages])
        text, drops = self.replies[len(self.requests) - 1]
        if text:
            yield text
        if drops:
            raise ConnectionError("connection reset mid-stream")


async def test_a_reply_cut_by_a_dropped_stream_is_resumed():
    runtime = IPythonRuntime()
    model = DroppingModel([("```python\nx = 4", True), ("1 + 1\n```", False), ("done", False)])
    agent = CaveAgent(model, runtime, max_steps=3)

    events = [e async for e in agent.stream_events("go")]

    assert [e for e in events if isinstance(e, OutputRecoveryEvent)]
    assert events[-1].stop_reason is StopReason.COMPLETED
    assert await runtime.retrieve("x") == 42
    resumed = model.requests[1]
    assert resumed[-2]["content"] == "```python\nx = 4"  # the text read so far, kept
    assert "Resume directly" in resumed[-1]["content"]


async def test_a_stream_that_dies_before_any_text_is_not_resumed():
    model = DroppingModel([("", True), ("never asked", False)])
    agent = CaveAgent(model, IPythonRuntime(), max_steps=3)

    events = [e async for e in agent.stream_events("go")]

    assert not [e for e in events if isinstance(e, OutputRecoveryEvent)]
    assert events[-1].stop_reason is StopReason.MODEL_ERROR
