"""A stream written to upstream 0.8's `StreamResponse` that reports no usage is counted
locally with its reasoning (`thinking`) included, also when it sent no content or failed
mid-reply: the failed call's request and what it sent are in the run's usage."""

from __future__ import annotations

from types import SimpleNamespace

from cave_tui import CaveAgent
from cave_tui.events import StopReason
from cave_tui.models import Model, ModelResponse, StreamResponse
from cave_tui.runtime import IPythonRuntime


def _chunk(reasoning: str | None = None, finish: str | None = None) -> SimpleNamespace:
    delta = SimpleNamespace(content=None, refusal=None, reasoning=reasoning, reasoning_content=None)
    return SimpleNamespace(usage=None, choices=[SimpleNamespace(finish_reason=finish, delta=delta)])


class _Reasoning(StreamResponse):
    def __init__(self, fail: bool) -> None:
        super().__init__()
        self.fail = fail

    async def _open_stream(self):  # type: ignore[no-untyped-def]
        fail = self.fail

        async def chunks():  # type: ignore[no-untyped-def]
            yield _chunk(reasoning="a long private chain of reasoning " * 8)
            if fail:
                raise ConnectionError("wire dropped")
            yield _chunk(finish="stop")

        return chunks()


class _ReasoningModel(Model):
    def __init__(self, fail: bool) -> None:
        self.fail = fail

    async def _complete(self, messages):  # type: ignore[no-untyped-def]
        return ModelResponse(content="")

    def stream(self, messages):  # type: ignore[no-untyped-def]
        return _Reasoning(self.fail)


async def test_reasoning_of_a_contentless_stream_is_counted() -> None:
    response = await CaveAgent(_ReasoningModel(False), runtime=IPythonRuntime()).run("q")

    assert response.stop_reason is StopReason.MODEL_ERROR and response.content == ""
    assert response.usage.prompt_tokens > 0
    assert response.usage.completion_tokens >= 30


async def test_a_stream_that_fails_mid_reply_is_still_counted() -> None:
    agent = CaveAgent(_ReasoningModel(True), runtime=IPythonRuntime())
    response = await agent.run("q")

    assert response.stop_reason is StopReason.MODEL_ERROR
    assert "wire dropped" in (response.error or "")
    assert response.usage.prompt_tokens > 0
    assert response.usage.completion_tokens >= 30
    assert agent.usage.total_tokens == response.usage.total_tokens
