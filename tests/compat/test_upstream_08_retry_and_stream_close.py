"""Upstream 0.8's retry seam (`cave_tui.models.retry`, `cave_tui.models.errors`): which
provider errors are retried, a 0.8 stream re-opened when its connect drops before any
text, and the agent closing every 0.8 stream it opened."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from types import SimpleNamespace
from typing import Any

import pytest

from cave_tui import CaveAgent
from cave_tui.models import (
    Model,
    ModelError,
    PromptTooLongError,
    ProviderBillingError,
    ProviderError,
    StreamResponse,
    retry,
)
from cave_tui.models.errors import classify_provider_error
from cave_tui.runtime import IPythonRuntime


class HTTPFailure(Exception):
    def __init__(self, text: str, status: int | None = None) -> None:
        super().__init__(text)
        self.status_code = status


def chunk(content: str | None = None, finish: str | None = None) -> SimpleNamespace:
    delta = SimpleNamespace(content=content, reasoning=None, reasoning_content=None)
    return SimpleNamespace(choices=[SimpleNamespace(delta=delta, finish_reason=finish)], usage=None)


class Raw:
    """A provider's raw stream: fails its first reads *fails* times, then the chunks."""

    def __init__(self, chunks: list[Any], error: Exception | None = None) -> None:
        self.chunks = list(chunks)
        self.error = error
        self.closed = False

    def __aiter__(self) -> Raw:
        return self

    async def __anext__(self) -> Any:
        if self.error is not None:
            raise self.error
        if not self.chunks:
            raise StopAsyncIteration
        item = self.chunks.pop(0)
        if isinstance(item, Exception):
            raise item
        return item

    async def close(self) -> None:
        self.closed = True


class Stream(StreamResponse):
    """0.8's interface: only `_open_stream`; its first *fails* opens drop the connect."""

    def __init__(self, chunks: list[Any], *, fails: int = 0, error: Exception | None = None):
        super().__init__()
        self.chunks, self.fails, self.error = chunks, fails, error
        self.opened: list[Raw] = []

    async def _open_stream(self) -> Raw:
        dropped = len(self.opened) < self.fails
        raw = Raw(self.chunks, ConnectionResetError("connect dropped") if dropped else self.error)
        self.opened.append(raw)
        return raw


@pytest.fixture
def no_backoff(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(retry, "BASE_DELAY", 0.0)


def test_a_status_decides_and_a_dropped_connection_is_retried() -> None:
    assert retry.is_retryable(HTTPFailure("rate limited", 429))
    assert retry.is_retryable(HTTPFailure("server error", 503))
    assert not retry.is_retryable(HTTPFailure("invalid timeout parameter", 400))
    assert not retry.is_retryable(HTTPFailure("insufficient_quota", 429))  # billing
    assert retry.is_retryable(ConnectionError("boom"))
    assert retry.is_retryable(Exception("connection reset by peer"))
    assert not retry.is_retryable(Exception("totally unrelated"))


def test_every_provider_error_is_classified_as_a_typed_model_error() -> None:
    assert isinstance(
        classify_provider_error(HTTPFailure("maximum context length")), PromptTooLongError
    )
    assert isinstance(classify_provider_error(HTTPFailure("payment", 402)), ProviderBillingError)
    typed = classify_provider_error(AttributeError("malformed body"))
    assert isinstance(typed, ProviderError) and isinstance(typed, ModelError)
    assert classify_provider_error(typed) is typed


def test_with_retry_typed_retries_then_raises_the_typed_error(no_backoff: None) -> None:
    calls: list[int] = []

    async def flaky() -> str:
        calls.append(1)
        if len(calls) < 3:
            raise ConnectionError("reset")
        return "ok"

    async def too_long() -> str:
        raise HTTPFailure("maximum context length is 4096", 400)

    assert asyncio.run(retry.with_retry_typed(flaky)) == "ok" and len(calls) == 3
    with pytest.raises(PromptTooLongError):
        asyncio.run(retry.with_retry_typed(too_long))


async def read(stream: StreamResponse) -> list[str]:
    return [delta.content async for delta in stream]  # type: ignore[attr-defined]


def test_a_connect_dropped_before_any_text_is_opened_again(no_backoff: None) -> None:
    stream = Stream([chunk("hi"), chunk(finish="stop")], fails=2)
    assert asyncio.run(read(stream)) == ["hi"]
    assert len(stream.opened) == 3 and all(raw.closed for raw in stream.opened[:2])


def test_a_failure_after_text_or_not_worth_retrying_propagates(no_backoff: None) -> None:
    late = Stream([chunk("hi"), ConnectionError("dropped mid-reply")])
    got: list[str] = []

    async def collect() -> None:
        async for delta in late:
            got.append(delta.content)  # type: ignore[attr-defined]

    with pytest.raises(ConnectionError):
        asyncio.run(collect())
    assert got == ["hi"] and len(late.opened) == 1

    bad = Stream([], error=ValueError("deterministic bad request"))
    with pytest.raises(ValueError):
        asyncio.run(read(bad))
    assert len(bad.opened) == 1


class StreamingModel(Model):
    def __init__(self) -> None:
        self.streams: list[Stream] = []

    async def call(self, messages: list[dict[str, Any]]) -> Any:
        raise NotImplementedError

    def stream(self, messages: list[dict[str, Any]]) -> Stream:
        replies = ["```python\nprint(1)\n```", "done"]
        reply = replies[min(len(self.streams), 1)]
        self.streams.append(Stream([chunk(reply), chunk(" trailing"), chunk(finish="stop")]))
        return self.streams[-1]


def test_the_agent_closes_every_08_stream_it_opened() -> None:
    model = StreamingModel()
    agent = CaveAgent(model=model, runtime=IPythonRuntime(), display=False, max_steps=2)

    async def drain() -> AsyncIterator[Any]:
        return agent.stream_events("go")

    async def run() -> None:
        async for _ in await drain():
            pass

    asyncio.run(run())
    assert model.streams and all(s.opened and s.opened[-1].closed for s in model.streams)
