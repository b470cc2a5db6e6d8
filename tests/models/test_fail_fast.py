"""Errors a retry cannot fix fail at once, naming the model and the URL; transient ones retry.

Real HTTP against the scripted OpenAI-compatible server on 127.0.0.1, and a closed port.
Attempts are counted (requests the server saw, `RetryNotice`s), never wall time.
"""

from __future__ import annotations

import socket

import pytest

from cave_tui.models.base import ErrorKind, ModelError, RetryNotice
from cave_tui.models.failures import CallTarget, classify
from cave_tui.models.litellm_model import LiteLLMModel
from tests.helpers.openai_server import ScriptedOpenAIServer

HI = [{"role": "user", "content": "hi"}]


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


def _model(base_url: str, **kw) -> LiteLLMModel:
    return LiteLLMModel(
        "openai/test-model", api_base=base_url, retry_initial=0.01, retry_max=0.02, **kw
    )


async def _fail(model: LiteLLMModel) -> tuple[ModelError, list[RetryNotice]]:
    retries: list[RetryNotice] = []
    with pytest.raises(ModelError) as info:
        async for item in model.stream(HI):
            if isinstance(item, RetryNotice):
                retries.append(item)
    return info.value, retries


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


@pytest.mark.parametrize("stream", [True, False])
async def test_refused_key_fails_at_once_naming_url_and_model(server, stream):
    server.script.append(("status", 401, {}, {"error": {"message": "invalid api key"}}))
    error, retries = await _fail(_model(server.base_url, api_key="wrong", stream=stream))
    assert error.kind is ErrorKind.AUTH and not retries and len(server.requests) == 1
    text = str(error)
    assert server.base_url in text and "openai/test-model" in text and "invalid api key" in text
    assert "check the API key" in text  # a key was given: no variable to set


async def test_404_fails_at_once_naming_url_and_model(server):
    server.script.append(("status", 404, {}, {"error": {"message": "model not found"}}))
    error, retries = await _fail(_model(server.base_url, api_key="k"))
    assert error.kind is ErrorKind.NOT_FOUND and not retries and len(server.requests) == 1
    assert server.base_url in str(error) and "openai/test-model" in str(error)
    assert "--api-base" in str(error)


async def test_a_closed_port_fails_at_once_naming_the_url():
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    error, retries = await _fail(_model(url, api_key="k"))
    assert error.kind is ErrorKind.CONNECTION and retries == []
    assert url in str(error) and "connection refused" in str(error)


async def test_a_missing_key_is_not_an_internal_server_error(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    error, retries = await _fail(LiteLLMModel("openai/gpt-4o-mini", retry_initial=0.01))
    assert error.kind is ErrorKind.AUTH and retries == []
    assert "OPENAI_API_KEY" in str(error) and "openai/gpt-4o-mini" in str(error)
    assert "InternalServerError" not in str(error)


async def test_an_unknown_model_is_named_before_any_request():
    error, retries = await _fail(LiteLLMModel("nosuchprovider-xyz/model", api_key="k"))
    assert error.kind is ErrorKind.NOT_FOUND and retries == []
    assert "nosuchprovider-xyz/model" in str(error) and "provider/name" in str(error)


async def test_transient_errors_are_still_retried(server):
    server.script.extend(
        [
            ("status", 503, {}, {"error": {"message": "busy"}}),
            ("status", 429, {}, {"error": {"message": "slow down"}}),
            ("reply", "fine", "stop", {"prompt_tokens": 1, "completion_tokens": 1}),
        ]
    )
    text, _ = await _model(server.base_url, api_key="k").complete(HI)
    assert text == "fine" and len(server.requests) == 3


def test_an_unresolvable_host_is_classified_by_its_cause():
    """A DNS failure (no network in tests: the chain litellm raises, built here)."""
    try:
        try:
            raise socket.gaierror(-2, "Name or service not known")
        except socket.gaierror as exc:
            raise RuntimeError("Connection error.") from exc
    except RuntimeError as outer:
        wrapped = outer
    wrapped.status_code = 500  # type: ignore[attr-defined]  # as litellm reports it
    target = CallTarget("openai/m", "http://nowhere.invalid/v1", "openai")
    error = classify(wrapped, target)
    assert error.kind is ErrorKind.CONNECTION and "nowhere.invalid" in str(error)
    assert classify(wrapped).kind is ErrorKind.CONNECTION  # an upstream-interface model too
