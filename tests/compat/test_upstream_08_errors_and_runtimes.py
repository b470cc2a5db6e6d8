"""Upstream 0.8's model errors (`PromptTooLongError`, `ProviderBillingError`, their
predicates, `StreamStalledError`) and its runtime seam (`execute(code)`, no timeout),
under cave's names. An exhausted quota fails at once over real HTTP, never retried."""

from __future__ import annotations

import pytest

import cave_tui
from cave_tui import CaveAgent
from cave_tui.events import ExecutionResultEvent
from cave_tui.models import (
    ContextOverflowError,
    ModelError,
    PromptTooLongError,
    ProviderBillingError,
    ScriptedModel,
    StreamStalledError,
    is_billing_exhausted,
    is_context_length_exceeded,
)
from cave_tui.models.base import ErrorKind, RetryNotice
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.runtime import ExecutionResult, IPythonRuntime
from cave_tui.runtime.executor import RuntimeExecutionError
from tests.helpers.openai_server import ScriptedOpenAIServer

HI = [{"role": "user", "content": "hi"}]
QUOTA = {"error": {"message": "You exceeded your current quota", "code": "insufficient_quota"}}


class ProviderError(Exception):
    def __init__(self, text: str, *, code: str | None = None, status: int | None = None):
        super().__init__(text)
        self.code = code
        self.status_code = status


def test_08_error_names():
    assert PromptTooLongError is ContextOverflowError
    assert issubclass(ProviderBillingError, ModelError)
    assert issubclass(StreamStalledError, ModelError) and issubclass(
        StreamStalledError, TimeoutError
    )
    assert ProviderBillingError("no credit").kind is ErrorKind.BILLING
    assert not ErrorKind.BILLING.retryable
    assert RuntimeExecutionError is cave_tui.RuntimeExecutionError


def test_08_predicates():
    assert is_context_length_exceeded(ProviderError("x", code="context_length_exceeded"))
    assert is_context_length_exceeded(ProviderError("prompt is too long: 210000 tokens"))
    assert not is_context_length_exceeded(ProviderError("max_tokens must be positive"))
    assert is_billing_exhausted(ProviderError("pay", status=402))
    assert is_billing_exhausted(ProviderError("quota", code="insufficient_quota", status=429))
    assert is_billing_exhausted(ProviderError("Your credit balance is too low"))
    assert not is_billing_exhausted(ProviderError("rate limited, slow down", status=429))


@pytest.mark.parametrize(
    ("status", "body"),
    [(429, QUOTA), (402, {"error": {"message": "insufficient credits"}})],
)
async def test_an_exhausted_quota_fails_at_once(status, body):
    with ScriptedOpenAIServer() as server:
        server.script.append(("status", status, {}, body))
        model = LiteLLMModel(
            "openai/test-model", api_base=server.base_url, api_key="k", retry_initial=0.01
        )
        retries: list[RetryNotice] = []
        with pytest.raises(ProviderBillingError):
            async for item in model.stream(HI):
                if isinstance(item, RetryNotice):
                    retries.append(item)
        assert retries == [] and len(server.requests) == 1


class EightRuntime(IPythonRuntime):
    """A runtime written to 0.8's protocol: `execute(code)`, no timeout."""

    def __init__(self) -> None:
        super().__init__()
        self.ran: list[str] = []

    async def execute(self, code: str) -> ExecutionResult:  # type: ignore[override]
        self.ran.append(code)
        return ExecutionResult(success=True, output=f"ran {len(self.ran)}\n")


REPLIES = ["```python\nx = 1\n```", "The cell ran."]


async def test_an_08_runtime_runs_the_cells():
    runtime = EightRuntime()
    agent = CaveAgent(ScriptedModel(REPLIES), runtime=runtime, display=False)
    events = [e async for e in agent.stream_events("go")]
    assert [c.strip() for c in runtime.ran] == ["x = 1"]
    results = [e for e in events if isinstance(e, ExecutionResultEvent)]
    assert [(r.output, r.success) for r in results] == [("ran 1\n", True)]


async def test_an_execute_set_on_the_instance_runs_the_cells():
    runtime = IPythonRuntime()
    seen: list[str] = []

    async def execute(code: str) -> ExecutionResult:
        seen.append(code)
        return ExecutionResult(success=True, output="from the instance\n")

    runtime.execute = execute  # type: ignore[method-assign]
    agent = CaveAgent(ScriptedModel(REPLIES), runtime=runtime, display=False)
    events = [e async for e in agent.stream_events("go")]
    assert [c.strip() for c in seen] == ["x = 1"]
    assert any(
        isinstance(e, ExecutionResultEvent) and e.output == "from the instance\n" for e in events
    )
