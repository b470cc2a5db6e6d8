"""A reply with no answer and no code (nothing, or a reasoning trace alone) does not
complete the run: it ends as a model error, as in 0.8, never as an empty answer."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from cave_tui import CaveAgent
from cave_tui.agent.events import ErrorEvent
from cave_tui.events import StopReason
from cave_tui.models import Model, ModelResponse, ScriptedModel, StreamResponse
from cave_tui.runtime import IPythonRuntime


class ReasoningOnly(StreamResponse):
    """0.8's stream of a reply that reasons and then says nothing."""

    async def _open_stream(self) -> AsyncIterator[Any]:
        async def chunks() -> AsyncIterator[Any]:
            for reasoning, finish in (("thinking it over", None), (None, "stop")):
                delta = SimpleNamespace(content=None, reasoning=reasoning, refusal=None)
                yield SimpleNamespace(
                    choices=[SimpleNamespace(delta=delta, finish_reason=finish)], usage=None
                )

        return chunks()


class Thinker(Model):
    async def _complete(self, messages: list[dict[str, str]]) -> ModelResponse:
        return ModelResponse(content="")

    def stream(self, messages: list[dict[str, str]]) -> StreamResponse:  # type: ignore[override]
        return ReasoningOnly()


EMPTY = [lambda: ScriptedModel([""]), lambda: ScriptedModel(["  \n"]), Thinker]


@pytest.mark.parametrize("make", EMPTY)
async def test_an_empty_reply_is_a_model_error(make):
    agent = CaveAgent(make(), runtime=IPythonRuntime(), display=False)
    events = [e async for e in agent.stream_events("q")]
    assert any(isinstance(e, ErrorEvent) and "empty reply" in e.content for e in events)
    assert events[-1].stop_reason is StopReason.MODEL_ERROR and events[-1].content == ""
    response = await CaveAgent(make(), runtime=IPythonRuntime(), display=False).run("q")
    assert response.stop_reason is StopReason.MODEL_ERROR and not response.completed


async def test_an_answer_still_completes():
    agent = CaveAgent(ScriptedModel(["It is 42."]), runtime=IPythonRuntime(), display=False)
    response = await agent.run("q")
    assert response.stop_reason is StopReason.COMPLETED and response.content == "It is 42."
