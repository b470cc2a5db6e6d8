"""Issue 34, item 6: the light OpenAI-compatible client (`OpenAIHTTPModel`, httpx) keeps every
promise `LiteLLMModel` keeps, against a scripted server on 127.0.0.1: streaming, usage (reported
or counted), finish reasons, retries, stalls, a refused connection, a keyless server, the key
rules, context overflow. Where the promise is the same, both clients are asked."""

from __future__ import annotations

import socket
import subprocess
import sys
import time

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import EventType
from cave_tui.models import model_from_spec
from cave_tui.models.base import (
    ContextOverflowError,
    ErrorKind,
    ModelError,
    StreamStalledError,
    TextDelta,
)
from cave_tui.models.credentials import Credentials
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.models.openai_http import OpenAIHTTPModel
from cave_tui.models.routing import ModelClient, client_for
from tests.helpers.openai_server import ScriptedOpenAIServer

U1 = {"prompt_tokens": 101, "completion_tokens": 17, "total_tokens": 118}
U2 = {"prompt_tokens": 150, "completion_tokens": 9, "total_tokens": 159}
U3 = {"prompt_tokens": 170, "completion_tokens": 5, "total_tokens": 175}
HI = [{"role": "user", "content": "hi"}]
SECRET = "sk-test-secret-light-0123"

CLIENTS = {"openai": OpenAIHTTPModel, "litellm": LiteLLMModel}


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


@pytest.fixture(params=["openai", "litellm"])
def client(request):
    """The model class of each client, built as `model_from_spec` builds it."""
    return CLIENTS[request.param]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


# --- the routing table ----------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "choice", "expected"),
    [
        ("openai/qwen2.5-7b", "auto", ModelClient.OPENAI),  # a local server with --api-base
        ("openai/gpt-4o-mini", "auto", ModelClient.OPENAI),
        ("gpt-4o", "auto", ModelClient.OPENAI),
        ("o3-mini", "auto", ModelClient.OPENAI),
        ("chatgpt-4o-latest", "auto", ModelClient.OPENAI),
        ("local", "auto", ModelClient.OPENAI),  # the embedded llama.cpp
        ("local:/models/q.gguf", "auto", ModelClient.OPENAI),
        ("anthropic/claude-sonnet-4", "auto", ModelClient.LITELLM),
        ("gemini/gemini-2.0-flash", "auto", ModelClient.LITELLM),
        ("bedrock/anthropic.claude-v2", "auto", ModelClient.LITELLM),
        ("ollama/llama3", "auto", ModelClient.LITELLM),  # litellm's native Ollama provider
        ("claude-3-5-sonnet", "auto", ModelClient.LITELLM),
        ("openai/m", "litellm", ModelClient.LITELLM),  # forced
        ("anthropic/claude-sonnet-4", "openai", ModelClient.OPENAI),  # forced
        ("gpt-4o", " LiteLLM ", ModelClient.LITELLM),
    ],
)
def test_which_client_calls_which_model(spec, choice, expected):
    assert client_for(spec, choice) is expected


def test_model_from_spec_builds_the_routed_client():
    light = model_from_spec("openai/m", api_base="http://127.0.0.1:1/v1")
    assert type(light) is OpenAIHTTPModel and light.wire_model == "m"
    assert type(model_from_spec("gpt-4o", api_key="k")) is OpenAIHTTPModel
    forced = model_from_spec("openai/m", api_base="http://127.0.0.1:1/v1", client="litellm")
    assert type(forced) is LiteLLMModel
    assert type(model_from_spec("anthropic/claude-sonnet-4", api_key="k")) is LiteLLMModel
    with pytest.raises(ValueError, match="model client must be one of auto, openai, litellm"):
        model_from_spec("openai/m", client="fast")


def test_building_a_light_model_imports_no_client():
    """httpx is imported at the first call, off the event loop; litellm never."""
    code = (
        "import sys\nfrom cave_tui.models import model_from_spec\n"
        "model_from_spec('openai/m', api_base='http://127.0.0.1:1/v1')\n"
        "model_from_spec('gpt-4o', api_key='k')\n"
        "print(sorted(m for m in ('litellm', 'httpx', 'openai') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[]"


def test_the_setting_is_declared_once():
    from cave_tui.app.config import TABLE, check_setting

    (declared,) = [d for d in TABLE if d.name == "model_client"]
    assert "--model-client" in declared.setting.flags and declared.default == "auto"
    assert check_setting("model_client", "litellm") == "litellm"
    with pytest.raises(ValueError):
        check_setting("model_client", "fast")


# --- the same promises on both clients -------------------------------------------------


@pytest.mark.parametrize("stream", [True, False])
async def test_an_agent_survives_429_500_a_drop_and_length(server, client, stream):
    server.script.extend(
        [
            ("status", 429, {"Retry-After": "0.3"}, {"error": {"message": "rate limited"}}),
            ("status", 500, {}, {"error": {"message": "internal"}}),
            *([("drop",)] if stream else []),
            ("reply", "```python\nanswer = 6 *", "length", U1),
            ("reply", " 7\n```", "stop", U2),
            ("reply", "The answer is 42.", "stop", U3),
        ]
    )
    model = client(
        "openai/test-model",
        api_key="local",
        api_base=server.base_url,
        stream=stream,
        retry_initial=0.05,
        retry_max=0.2,
    )
    agent = CaveAgent(model)
    events = [e async for e in agent.stream_events("compute")]
    assert events[-2].type is EventType.FINAL_RESPONSE
    assert events[-2].content == "The answer is 42."
    assert await agent.runtime.retrieve("answer") == 42
    retries = [e for e in events if e.type is EventType.RETRY]
    assert len(retries) == (3 if stream else 2)
    assert retries[0].delay == pytest.approx(0.3)  # Retry-After honoured
    usage = [e for e in events if e.type is EventType.USAGE]
    assert [(u.prompt_tokens, u.completion_tokens) for u in usage] == [
        (101, 17),
        (150, 9),
        (170, 5),
    ]
    assert all(u.reported for u in usage)
    # No stacked retries: exactly one HTTP request per scripted behaviour.
    assert len(server.requests) == (6 if stream else 5)
    assert all(r["model"] == "test-model" for r in server.requests)  # `openai/` stripped
    if stream:
        assert all(r.get("stream_options") == {"include_usage": True} for r in server.requests)
    # The continuation request carried the partial reply and the resume prompt.
    continuation = server.requests[-2]["messages"]
    assert continuation[-2]["role"] == "assistant" and continuation[-2]["content"].endswith("6 *")


async def test_text_arrives_in_deltas_with_reported_usage_and_finish(server, client):
    server.script.append(("reply", "a reply in several pieces", "stop", U1))
    model = client("openai/test-model", api_key="local", api_base=server.base_url)
    items = [i async for i in model.stream(HI, temperature=0, max_tokens=33)]
    deltas = [i.text for i in items if isinstance(i, TextDelta)]
    assert len(deltas) > 1 and "".join(deltas) == "a reply in several pieces"
    completion = items[-1]
    assert completion.finish_reason == "stop" and completion.usage_reported
    assert (completion.usage.prompt_tokens, completion.usage.completion_tokens) == (101, 17)
    assert server.requests[0]["temperature"] == 0 and server.requests[0]["max_tokens"] == 33


@pytest.mark.parametrize("stream", [True, False])
async def test_usage_is_counted_when_the_server_reports_none(server, stream):
    """(litellm counts a stream's usage itself and calls it reported: the light client only.)"""
    server.script.append(("reply", "counted here", "stop", None))
    model = OpenAIHTTPModel("openai/test-model", api_key="local", api_base=server.base_url)
    model.use_stream = stream
    text, completion = await model.complete(HI)
    assert text == "counted here" and not completion.usage_reported
    assert completion.usage.prompt_tokens > 0 and completion.usage.completion_tokens > 0


async def test_a_stream_stalled_mid_reply_ends_with_a_clear_error(server, client):
    """Chunks, then silence: the idle timeout ends it, retried once, naming model and URL."""
    server.script.extend([("stall", 3), ("stall", 2)])
    model = client(
        "openai/test-model",
        api_key="local",
        api_base=server.base_url,
        first_token_timeout=30,  # the first token is quick here: only the idle limit is hit
        stream_idle_timeout=0.5,
        retry_initial=0.01,
        retry_max=0.02,
    )
    started = time.monotonic()
    with pytest.raises(StreamStalledError) as caught:
        await model.complete(HI)
    # a hang guard only (litellm's first import is in it): the message says the idle limit
    # ended it, and the server's stalls (3 s, 2 s) were not waited out
    assert time.monotonic() - started < 30
    message = str(caught.value)
    assert "openai/test-model" in message and server.base_url in message
    assert "mid-reply" in message and "0.5 s" in message
    assert len(server.requests) == 2  # one retry of a stalled stream, then it gives up


async def test_no_first_token_ends_at_the_first_token_timeout_without_retry(server, client):
    server.script.extend([("stall", 0), ("reply", "late", "stop", U1)])
    model = client(
        "openai/test-model",
        api_key="local",
        api_base=server.base_url,
        first_token_timeout=3,  # litellm's first call sets up its client inside this window
        stream_idle_timeout=30,
    )
    started = time.monotonic()
    with pytest.raises(StreamStalledError, match=r"no reply within 3 s") as caught:
        await model.complete(HI)
    assert time.monotonic() - started < 20  # not the 30 s idle limit (litellm's import is in it)
    assert caught.value.first and server.base_url in str(caught.value)
    assert len(server.requests) == 1


async def test_a_refused_connection_is_said_at_once(client):
    url = f"http://127.0.0.1:{_closed_port()}/v1"
    model = client("openai/m", api_base=url, api_key="local", retry_initial=5)
    started = time.monotonic()
    with pytest.raises(ModelError) as caught:
        await model.complete(HI)
    assert time.monotonic() - started < 10  # no retry with its 5 s backoff
    assert caught.value.kind is ErrorKind.CONNECTION
    assert url in str(caught.value) and "refused" in str(caught.value)


@pytest.mark.parametrize("stream", [True, False])
async def test_context_overflow_is_the_typed_error_and_not_retried(server, client, stream):
    too_long = "the request exceeds the available context size, try increasing it"
    server.script.append(("status", 400, {}, {"error": {"message": too_long}}))
    model = client("openai/test-model", api_key="local", api_base=server.base_url, stream=stream)
    with pytest.raises(ContextOverflowError):
        await model.complete(HI)
    assert len(server.requests) == 1


async def test_a_bad_request_fails_at_once_with_the_servers_words(server, client):
    server.script.append(("status", 400, {}, {"error": {"message": "unknown parameter foo"}}))
    model = client("openai/test-model", api_key="local", api_base=server.base_url)
    with pytest.raises(ModelError, match="unknown parameter foo") as caught:
        await model.complete(HI)
    assert caught.value.kind is ErrorKind.BAD_REQUEST and len(server.requests) == 1


# --- keys --------------------------------------------------------------------------------


async def test_a_keyless_named_server_is_asked_with_no_key(server, client, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script.append(("reply", "ok", "stop", U1))
    model = client("openai/m", api_base=server.base_url)
    assert (await model.complete(HI))[0] == "ok"
    assert server.headers[0].get("authorization", "") == ""


async def test_a_server_wanting_a_key_names_the_variable(server, client, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script.append(("status", 401, {}, {"error": {"message": "key required"}}))
    model = client("openai/m", api_base=server.base_url, max_retries=0)
    with pytest.raises(ModelError) as caught:
        await model.complete(HI)
    assert caught.value.kind is ErrorKind.AUTH
    assert server.base_url in str(caught.value) and "OPENAI_API_KEY" in str(caught.value)


async def test_held_credentials_reach_the_named_server(server, client, monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server.script.append(("reply", "ok", "stop", U1))
    held = Credentials({"OPENAI_API_KEY": SECRET})
    model = client("openai/m", api_base=server.base_url, credentials=held)
    await model.complete(HI)
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"


async def test_an_unnamed_loopback_url_gets_no_key(server, client, monkeypatch):
    server.script.append(("reply", "ok", "stop", U1))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # found, not named
    model = client("openai/m", credentials=Credentials({"OPENAI_API_KEY": SECRET}))
    assert (await model.complete(HI))[0] == "ok"
    assert not any(SECRET in value for value in server.headers[0].values())


async def test_openai_without_a_key_fails_before_any_request(monkeypatch):
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    with pytest.raises(ModelError, match="set OPENAI_API_KEY") as caught:
        await OpenAIHTTPModel("gpt-4o-mini").complete(HI)
    assert caught.value.kind is ErrorKind.AUTH


async def test_a_base_url_set_after_building_gets_no_key(server, monkeypatch):
    """In process, model code could point the environment at its own server mid-session."""
    for name in ("OPENAI_BASE_URL", "OPENAI_API_BASE"):
        monkeypatch.delenv(name, raising=False)
    server.script.append(("reply", "ok", "stop", U1))
    model = OpenAIHTTPModel("gpt-4o", credentials=Credentials({"OPENAI_API_KEY": SECRET}))
    assert not model._call_target().key_withheld  # OpenAI's own API: the key goes
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    assert (await model.complete(HI))[0] == "ok"
    assert not any(SECRET in value for value in server.headers[0].values())


def test_tls_contexts_are_made_once_and_only_verified_ones_for_https():
    import ssl

    from cave_tui.models.tls import tls_context

    secure = tls_context("https://api.openai.com/v1")
    assert secure is tls_context("https://example.com/v1")  # made once
    assert secure.verify_mode is ssl.CERT_REQUIRED and secure.cert_store_stats()["x509_ca"] > 0
    plain = tls_context("http://127.0.0.1:8080/v1")
    assert plain is not secure and plain.verify_mode is ssl.CERT_REQUIRED  # fails closed
    assert plain.cert_store_stats()["x509_ca"] == 0
