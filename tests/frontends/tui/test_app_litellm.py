"""The app with a real LiteLLMModel over HTTP (a server on 127.0.0.1): cost in the status."""

from __future__ import annotations

import pytest

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.models.litellm_model import LiteLLMModel
from tests.helpers.openai_server import ScriptedOpenAIServer

from .conftest import chat_text, settle, submit


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


async def test_usage_and_cost_estimate_reach_the_status_line(server):
    from cave_tui.frontends.tui.app import CaveApp

    usage = {"prompt_tokens": 1200, "completion_tokens": 300, "total_tokens": 1500}
    server.script.append(("reply", "Hello from the server.", "stop", usage))
    model = LiteLLMModel("openai/gpt-4o-mini", api_key="sk-test", api_base=server.base_url)
    services = AppServices(Config(kernel=False), model=model)
    app = CaveApp(
        services, animate=False, clock=lambda: 0.0, history_file=None,
        persist_settings=False, start_delay=0,
    )  # fmt: skip
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "hi")
        await settle(pilot)
        assert "Hello from the server." in chat_text(app)
        assert (app.status.tokens_in, app.status.tokens_out) == (1200, 300)
        expected = model.cost(services.agent.usage)
        assert expected and app.status.cost == pytest.approx(expected)
        await submit(pilot, "/cost")
        assert f"${expected:.4f}" in chat_text(app)
