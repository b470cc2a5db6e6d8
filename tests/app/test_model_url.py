"""`/model NAME URL`: the user names a loopback server, and only then does it get the key
(models/endpoints.py); `/model NAME` alone to a server found there sends none."""

from __future__ import annotations

import pytest

from cave_tui.app.commands import load_commands
from cave_tui.models.base import TextDelta
from cave_tui.models.credentials import Credentials
from tests.helpers.front_end import RecordingContext
from tests.helpers.openai_server import ScriptedOpenAIServer

SECRET = "sk-test-secret-for-model-url"
USAGE = {"prompt_tokens": 3, "completion_tokens": 2, "total_tokens": 5}


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


async def _ask(ctx: RecordingContext) -> str:
    model = ctx.services.model
    items = [item async for item in model.stream([{"role": "user", "content": "hi"}])]
    return "".join(i.text for i in items if isinstance(i, TextDelta))


async def test_the_key_goes_only_to_the_url_typed_after_model(server, monkeypatch):
    server.script.extend([("reply", "one", "stop", USAGE), ("reply", "two", "stop", USAGE)])
    monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)  # the server found, not named
    ctx = RecordingContext()
    ctx.services.credentials = Credentials({"OPENAI_API_KEY": SECRET})
    registry = load_commands()
    assert await registry.dispatch("/model openai/m", ctx)
    assert await _ask(ctx) == "one"
    assert await registry.dispatch(f"/model openai/m {server.base_url}", ctx)
    assert ctx.services.config.api_base == server.base_url
    assert await _ask(ctx) == "two"
    first, second = (h.get("authorization", "") for h in server.headers)
    assert first == "" and second == f"Bearer {SECRET}"
