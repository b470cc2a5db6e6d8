"""API keys go to a loopback server only at a URL the user named (models/endpoints.py).

A host-started OpenAI-compatible server records each request's headers; the key is held as
the app holds it (`Credentials`, out of the environment)."""

import pytest

from cave_tui.models.base import ModelError, TextDelta
from cave_tui.models.credentials import Credentials
from cave_tui.models.endpoints import is_loopback, key_may_go, resolved_endpoint
from cave_tui.models.litellm_model import LiteLLMModel
from tests.helpers.openai_server import ScriptedOpenAIServer

SECRET = "sk-test-secret-0123456789"
USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}
KEYS = Credentials({"OPENAI_API_KEY": SECRET})


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


async def _ask(model: LiteLLMModel) -> str:
    items = [item async for item in model.stream([{"role": "user", "content": "hi"}])]
    return "".join(i.text for i in items if isinstance(i, TextDelta))


def _sent_key(headers: dict[str, str]) -> bool:
    return any(SECRET in value for value in headers.values())


@pytest.mark.parametrize("stream", [True, False])
async def test_a_loopback_url_the_user_did_not_name_gets_no_key(server, monkeypatch, stream):
    server.script.append(("reply", "ok", "stop", USAGE))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # found, not named
    model = LiteLLMModel("openai/m", credentials=KEYS, stream=stream, max_retries=0)
    assert await _ask(model) == "ok"
    (headers,) = server.headers
    assert not _sent_key(headers)
    assert headers.get("authorization", "") == ""


async def test_an_explicit_api_key_is_withheld_from_an_unnamed_loopback_url(server, monkeypatch):
    server.script.append(("reply", "ok", "stop", USAGE))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    model = LiteLLMModel("openai/m", api_key=SECRET, max_retries=0)
    assert await _ask(model) == "ok"
    assert not _sent_key(server.headers[0])


async def test_the_url_the_user_named_gets_the_key(server):
    server.script.append(("reply", "ok", "stop", USAGE))
    model = LiteLLMModel("openai/m", api_base=server.base_url, credentials=KEYS, max_retries=0)
    assert await _ask(model) == "ok"
    assert server.headers[0]["authorization"] == f"Bearer {SECRET}"


async def test_a_refusal_says_the_key_was_withheld_and_how_to_send_it(server, monkeypatch):
    server.script.append(("status", 401, {}, {"error": {"message": "no key"}}))
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    model = LiteLLMModel("openai/m", credentials=KEYS, max_retries=0)
    with pytest.raises(ModelError) as caught:
        await _ask(model)
    assert "no API key was sent" in str(caught.value)
    assert "--api-base" in str(caught.value)


def test_loopback_addresses():
    for url in ("http://127.0.0.1:8000/v1", "http://localhost:11434", "http://[::1]:1/v1",
                "http://0.0.0.0:8080", "http://127.9.9.9", "http://[::ffff:127.0.0.1]:1",
                "http://LOCALHOST.:1", "http://x.localhost/v1"):  # fmt: skip
        assert is_loopback(url), url
    for url in ("https://api.openai.com/v1", "http://10.0.0.2:8000", None, ""):
        assert not is_loopback(url), url
    assert key_may_go("http://127.0.0.1:8000/v1/", "http://127.0.0.1:8000/v1")
    assert not key_may_go("http://127.0.0.1:8001/v1", "http://127.0.0.1:8000/v1")
    assert key_may_go("https://api.openai.com/v1", None)


def test_the_endpoint_is_the_one_litellm_calls():
    env = {"OLLAMA_API_BASE": "https://ollama.example.com", "OPENAI_API_BASE": "http://[::1]:9/v1"}
    assert resolved_endpoint("ollama_chat", None, None, env) == "https://ollama.example.com"
    assert resolved_endpoint("ollama", None, None, {}) == "http://localhost:11434"
    assert resolved_endpoint("openai", None, None, env) == "http://[::1]:9/v1"
    assert resolved_endpoint("openai", "http://x/v1", None, env) == "http://x/v1"
    assert resolved_endpoint("openai", None, None, {}) is None  # the hosted API


async def test_a_base_url_set_after_the_first_call_gets_no_key(server, monkeypatch):
    """In process, model code could point the environment at its own server mid-session."""
    server.script.append(("reply", "ok", "stop", USAGE))
    model = LiteLLMModel("openai/m", credentials=KEYS, max_retries=0)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.delenv("OPENAI_API_BASE", raising=False)
    import litellm

    assert not model._target(litellm).key_withheld  # OpenAI's own API: the key goes
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
    assert await _ask(model) == "ok"
    assert not _sent_key(server.headers[0])
