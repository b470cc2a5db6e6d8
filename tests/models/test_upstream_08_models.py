"""A custom model written to upstream CaveAgent 0.8's `Model`: `_complete` for `call`,
`stream` returning a `StreamResponse` over `_open_stream` (OpenAI-shaped chunks, with
`reasoning` and `refusal` kept apart from the content), `ModelResponse.usage`/`.refusal`."""

from __future__ import annotations

from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from cave_tui import CaveAgent
from cave_tui.events import StoppedEvent, TextEvent
from cave_tui.models import Model, ModelError, ModelResponse, StreamResponse, TokenUsage
from cave_tui.runtime import IPythonRuntime


def chunk(
    content: str | None = None,
    *,
    reasoning: str | None = None,
    refusal: str | None = None,
    finish: str | None = None,
    usage: TokenUsage | None = None,
) -> Any:
    delta = SimpleNamespace(content=content, reasoning=reasoning, refusal=refusal)
    return SimpleNamespace(
        choices=[SimpleNamespace(delta=delta, finish_reason=finish)], usage=usage
    )


class ChunkStream(StreamResponse):
    """0.8's way: the subclass opens the provider's stream; the base reads it."""

    def __init__(self, chunks: list[Any]) -> None:
        super().__init__()
        self.chunks = chunks
        self.closed = False

    async def _open_stream(self) -> AsyncIterator[Any]:
        async def provider() -> AsyncIterator[Any]:
            for c in self.chunks:
                yield c

        return provider()


class EightModel(Model):
    """A user's 0.8-style model: `_complete` and `stream`, messages only."""

    def __init__(self, replies: list[list[Any]]) -> None:
        self.replies = list(replies)
        self.seen: list[list[dict[str, str]]] = []

    async def _complete(self, messages: list[dict[str, str]]) -> ModelResponse:
        self.seen.append(messages)
        if messages[-1]["content"] == "fail":
            raise ConnectionError("provider unreachable")
        return ModelResponse(content="hi", usage=TokenUsage(3, 2, 5), finish_reason="stop")

    def stream(self, messages: list[dict[str, str]]) -> StreamResponse:  # type: ignore[override]
        self.seen.append(messages)
        return ChunkStream(self.replies.pop(0))


CODE = "Computing.\n```python\nanswer = 6 * 7\nprint(answer)\n```"


async def test_an_08_style_model_drives_a_turn_its_reasoning_kept_out_of_the_answer() -> None:
    model = EightModel(
        [
            [chunk(reasoning="let me think"), chunk(CODE), chunk(finish="stop")],
            [
                chunk("It is 42."),
                chunk(finish="stop"),
                chunk(usage=TokenUsage(40, 4, 44)),
            ],
        ]
    )
    runtime = IPythonRuntime()
    agent = CaveAgent(model, runtime=runtime, display=False)
    events = [e async for e in agent.stream_events("six times seven?")]
    assert await runtime.retrieve("answer") == 42
    text = "".join(e.content for e in events if isinstance(e, TextEvent))
    assert "let me think" not in text and "It is 42." in text
    stopped = events[-1]
    assert isinstance(stopped, StoppedEvent) and stopped.content == "It is 42."
    assert stopped.usage.prompt_tokens >= 40  # the provider's count of the last call


async def test_a_refusal_alone_is_the_answer() -> None:
    refusal = [chunk(refusal="I can't help with that."), chunk(finish="stop")]
    response = await CaveAgent(EightModel([refusal]), display=False).run("do harm")
    assert response.completed and response.content == "I can't help with that."


async def test_call_goes_to_complete_with_usage_and_typed_errors() -> None:
    model = EightModel([])
    response = await model.call([{"role": "user", "content": "hello"}])
    assert response.content == "hi" and response.usage.total_tokens == 5
    assert response.token_usage is response.usage  # 0.7's name for the same count
    with pytest.raises(ModelError):
        await model.call([{"role": "user", "content": "fail"}])


def test_model_response_speaks_both_generations() -> None:
    old = ModelResponse(content="a", token_usage=TokenUsage(1, 1, 2))
    new = ModelResponse(content="a", usage=TokenUsage(1, 1, 2))
    assert old == new and old.refusal is None and new.thinking is None
    with pytest.raises(TypeError, match="not both"):
        ModelResponse("a", usage=TokenUsage(1, 0, 1), token_usage=TokenUsage(2, 0, 2))
    payload = SimpleNamespace(
        choices=[
            SimpleNamespace(
                message=SimpleNamespace(content=None, refusal="No.", reasoning="hmm"),
                finish_reason="stop",
            )
        ],
        usage=SimpleNamespace(prompt_tokens=5, completion_tokens=1, total_tokens=6),
    )
    built = Model._build_response(payload)
    assert (built.content, built.refusal, built.thinking) == ("No.", "No.", "hmm")
    assert built.usage.total_tokens == 6
