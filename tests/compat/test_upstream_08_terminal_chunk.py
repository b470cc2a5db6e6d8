"""A 0.8-style stream that has sent its answer and its terminal chunk (a finish reason)
keeps that answer when the connection then drops or stalls: the run completes with it,
and the model is not asked again. Before the terminal chunk, either is a model error."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from cave_tui import CaveAgent
from cave_tui.events import StopReason
from cave_tui.models import Model, ModelResponse, StreamResponse
from cave_tui.runtime import IPythonRuntime


def _chunk(content: str | None = None, finish: str | None = None) -> SimpleNamespace:
    delta = SimpleNamespace(content=content, refusal=None, reasoning=None, reasoning_content=None)
    return SimpleNamespace(usage=None, choices=[SimpleNamespace(finish_reason=finish, delta=delta)])


class _Ending(StreamResponse):
    def __init__(self, how: str, terminal: bool) -> None:
        super().__init__()
        self.how, self.terminal = how, terminal

    async def _open_stream(self):  # type: ignore[no-untyped-def]
        how, terminal = self.how, self.terminal

        async def chunks():  # type: ignore[no-untyped-def]
            yield _chunk(content="COMPLETE")
            if terminal:
                yield _chunk(finish="stop")
            if how == "disconnect":
                raise ConnectionError("usage chunk was lost")
            await asyncio.Event().wait()  # stalls

        return chunks()


class _Model(Model):
    def __init__(self, how: str, terminal: bool) -> None:
        self.how, self.terminal, self.calls = how, terminal, 0

    async def _complete(self, messages):  # type: ignore[no-untyped-def]
        return ModelResponse(content="unused")

    def stream(self, messages):  # type: ignore[no-untyped-def]
        self.calls += 1
        return _Ending(self.how, self.terminal)


@pytest.mark.parametrize("how", ["disconnect", "stall"])
async def test_the_answer_before_a_lost_end_is_kept(how: str) -> None:
    model = _Model(how, terminal=True)
    agent = CaveAgent(model, runtime=IPythonRuntime(), max_steps=2, stream_idle_timeout=0.05)

    response = await agent.run("q")

    assert response.stop_reason is StopReason.COMPLETED
    assert response.content == "COMPLETE" and model.calls == 1


@pytest.mark.parametrize("how", ["disconnect", "stall"])
async def test_without_the_terminal_chunk_it_is_a_model_error(how: str) -> None:
    model = _Model(how, terminal=False)
    agent = CaveAgent(model, runtime=IPythonRuntime(), max_steps=2, stream_idle_timeout=0.05)

    response = await agent.run("q")

    assert response.stop_reason is StopReason.MODEL_ERROR
