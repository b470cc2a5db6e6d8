"""A server at the URL the user named, with no key held for it, is sent none (issue 31,
item 1); one that wants a key refuses, and the error names the variable to set. A loopback
server that accepts no connection is named before any client is built (reach.py)."""

import socket
import time

import pytest

from cave_tui.models.base import ErrorKind, ModelError, TextDelta
from cave_tui.models.failures import CallTarget
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.models.reach import unreachable
from tests.helpers.openai_server import ScriptedOpenAIServer


async def test_a_server_wanting_a_key_says_which_variable_to_set(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedOpenAIServer() as server:
        server.script.append(("status", 401, {}, {"error": {"message": "key required"}}))
        model = LiteLLMModel("openai/m", api_base=server.base_url, max_retries=0)
        with pytest.raises(ModelError) as caught:
            _ = [i async for i in model.stream([{"role": "user", "content": "hi"}])]
        (headers,) = server.headers
    error = caught.value
    assert error.kind is ErrorKind.AUTH
    assert server.base_url in str(error) and "OPENAI_API_KEY" in str(error)
    assert headers.get("authorization", "") == ""


async def test_a_key_given_still_goes_to_the_named_server(monkeypatch):
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    with ScriptedOpenAIServer() as server:
        server.script.append(("reply", "ok", "stop", {"prompt_tokens": 1, "completion_tokens": 1}))
        model = LiteLLMModel("openai/m", api_base=server.base_url, api_key="sk-mine")
        items = [i async for i in model.stream([{"role": "user", "content": "hi"}])]
    assert [i.text for i in items if isinstance(i, TextDelta)] == ["ok"]
    assert server.headers[0]["authorization"] == "Bearer sk-mine"


def test_a_loopback_server_that_accepts_no_connection_is_named_as_stuck():
    """A listening socket whose backlog (0) one connection fills: the next connect hangs."""
    with socket.socket() as stuck, socket.socket() as first:
        stuck.bind(("127.0.0.1", 0))
        stuck.listen(0)
        port = stuck.getsockname()[1]
        first.connect(("127.0.0.1", port))  # fills the backlog; nothing ever accepts
        url = f"http://127.0.0.1:{port}/v1"
        started = time.monotonic()
        error = unreachable(CallTarget("openai/m", url), timeout=0.5)
        took = time.monotonic() - started
    assert error is not None and error.kind is ErrorKind.CONNECTION
    assert url in str(error) and "accepted no connection within 0.5 s" in str(error)
    assert took < 5


def test_a_remote_url_is_left_to_the_client():
    assert unreachable(CallTarget("openai/m", "http://192.0.2.1:9/v1"), timeout=0.5) is None
