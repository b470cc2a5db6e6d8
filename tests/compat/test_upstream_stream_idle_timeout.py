"""Upstream 0.8's `CaveAgent(stream_idle_timeout=...)`: a model of any kind that stops
sending ends the run as a model error (a StoppedEvent, nothing raised); a slow but
steady one is not cut, since the limit is per piece, not per reply."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator

from cave_tui import CaveAgent
from cave_tui.events import StoppedEvent, StopReason
from cave_tui.models import Model, ModelResponse, StreamStalledError
from cave_tui.runtime import IPythonRuntime


class PacedModel(Model):
    """A 0.7-style model: `stream` yields strings, *pause* seconds apart; `hang` stops it
    sending after its first piece."""

    def __init__(self, pieces: list[str], pause: float, *, hang: bool = False) -> None:
        self.pieces, self.pause, self.hang = pieces, pause, hang

    async def call(self, messages: list[dict[str, str]]) -> ModelResponse:
        return ModelResponse(content="".join(self.pieces))

    def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[str]:  # type: ignore[override]
        async def pieces() -> AsyncIterator[str]:
            for i, piece in enumerate(self.pieces):
                if i:
                    await asyncio.sleep(self.pause)
                yield piece
                if self.hang:
                    await asyncio.Event().wait()

        return pieces()


async def _stopped(agent: CaveAgent) -> StoppedEvent:
    async def drain() -> list[object]:
        return [e async for e in agent.stream_events("q")]

    events = await asyncio.wait_for(drain(), 10)
    assert isinstance(events[-1], StoppedEvent)
    return events[-1]


async def test_a_model_that_stops_sending_ends_the_run():
    model = PacedModel(["The answer ", "is 42."], 0, hang=True)
    agent = CaveAgent(model, runtime=IPythonRuntime(), display=False, stream_idle_timeout=0.2)
    stopped = await _stopped(agent)
    assert stopped.stop_reason is StopReason.MODEL_ERROR
    assert agent.stream_idle_timeout == 0.2


async def test_a_steady_model_is_not_cut():
    model = PacedModel(["The ", "answer ", "is ", "42."], 0.05)
    agent = CaveAgent(model, runtime=IPythonRuntime(), display=False, stream_idle_timeout=0.5)
    stopped = await _stopped(agent)
    assert stopped.stop_reason is StopReason.COMPLETED
    assert stopped.content == "The answer is 42."


async def test_the_stall_is_a_stream_stalled_error():
    from cave_tui.models.adapt import stream_items

    model = PacedModel(["a", "b"], 0, hang=True)
    try:
        async for _ in stream_items(model, [{"role": "user", "content": "q"}], idle_timeout=0.1):
            pass
    except StreamStalledError as error:
        assert not error.first and error.waited == 0.1
    else:
        raise AssertionError("a stalled stream ended without an error")


def test_08_default_and_override():
    model = PacedModel(["hi"], 0)
    assert CaveAgent(model, runtime=IPythonRuntime()).stream_idle_timeout == 120.0
    assert (
        CaveAgent(model, runtime=IPythonRuntime(), stream_idle_timeout=None).stream_idle_timeout
        is None
    )


async def test_the_public_helper_passes_items_then_raises_a_timeout_error():
    from cave_tui.models import stream_with_idle_timeout

    async def two_then_stall() -> AsyncIterator[str]:
        yield "a"
        yield "b"
        await asyncio.sleep(5)
        yield "never"

    got: list[str] = []
    try:
        async for item in stream_with_idle_timeout(two_then_stall(), idle_timeout=0.1):
            got.append(item)
    except TimeoutError:  # 0.8's callers catch it as a TimeoutError
        pass
    assert got == ["a", "b"]
    steady = stream_with_idle_timeout(PacedModel(["x", "y"], 0).stream([]), None)
    assert [item async for item in steady] == ["x", "y"]


async def test_a_model_that_bounds_its_own_stream_keeps_its_limits():
    """cave's HTTP and local models bound each chunk themselves (first token included, which
    a local model may take minutes to send): the agent's limit does not cut them."""
    from cave_tui.models.chat_stream import ChatStreamModel
    from cave_tui.models.local.model import LocalModel

    class SlowFirstToken(PacedModel):
        bounds_own_stream = True

        def stream(self, messages: list[dict[str, str]]) -> AsyncIterator[str]:  # type: ignore[override]
            async def pieces() -> AsyncIterator[str]:
                await asyncio.sleep(0.4)
                yield "late but fine"

            return pieces()

    assert ChatStreamModel.bounds_own_stream and LocalModel.bounds_own_stream
    agent = CaveAgent(
        SlowFirstToken([], 0), runtime=IPythonRuntime(), display=False, stream_idle_timeout=0.1
    )
    stopped = await _stopped(agent)
    assert stopped.stop_reason is StopReason.COMPLETED and stopped.content == "late but fine"
