"""A provider stream whose close fails (0.8's contract): the failure is logged, and it
replaces neither the answer already read, nor the error that ended the reading, nor a
connect retry."""

from __future__ import annotations

import logging
from typing import Any

import pytest

from cave_tui import CaveAgent
from cave_tui.agent.events import ErrorEvent
from cave_tui.agent.stop_reason import StopReason
from cave_tui.models import Model, StreamResponse, retry
from cave_tui.runtime import IPythonRuntime
from tests.compat.test_upstream_08_retry_and_stream_close import Raw, chunk


class DyingRaw(Raw):
    """A raw stream (an Exception among its chunks is raised when read) whose close raises."""

    async def aclose(self) -> None:
        raise ConnectionResetError("reset while closing")


class Opens(StreamResponse):
    """0.8's interface: each open returns the next of *attempts*."""

    def __init__(self, *attempts: list[Any]) -> None:
        super().__init__()
        self.attempts = list(attempts)
        self.opened = 0

    async def _open_stream(self) -> DyingRaw:
        self.opened += 1
        return DyingRaw(self.attempts.pop(0))


class OneStream(Model):
    def __init__(self, stream: Opens) -> None:
        self.the_stream = stream

    async def call(self, messages: list[dict[str, Any]]) -> Any:
        raise NotImplementedError

    def stream(self, messages: list[dict[str, Any]]) -> Opens:
        return self.the_stream


class Billing(Exception):
    status_code = 402


async def _events(stream: Opens) -> list[Any]:
    agent = CaveAgent(model=OneStream(stream), runtime=IPythonRuntime(), display=False)
    return [e async for e in agent.stream_events("q")]


async def test_a_close_that_fails_keeps_the_answer_read(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING):
        last = (await _events(Opens([chunk("the whole answer", "stop")])))[-1]
    assert last.stop_reason is StopReason.COMPLETED and last.content == "the whole answer"
    assert "Failed to close the provider stream" in caplog.text


async def test_a_close_that_fails_does_not_replace_the_read_error() -> None:
    events = await _events(Opens([Billing("insufficient credits")]))
    assert events[-1].stop_reason is StopReason.MODEL_ERROR
    errors = [e for e in events if isinstance(e, ErrorEvent)]
    assert errors and "insufficient credits" in errors[-1].content
    assert "closing" not in errors[-1].content


async def test_a_connect_retry_survives_a_close_that_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(retry, "backoff", lambda attempt: 0.0)
    stream = Opens([ConnectionResetError("connect dropped")], [chunk("recovered", "stop")])
    assert [d.content async for d in stream] == ["recovered"] and stream.opened == 2
