"""LiteLLMModel over real HTTP against a scripted OpenAI-compatible server on 127.0.0.1.

The promises both clients keep (retries, usage, stalls, overflow) are asked of both in
test_openai_http.py; these are litellm's own."""

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus
from cave_tui.models.base import ModelError
from cave_tui.models.litellm_model import LiteLLMModel
from tests.helpers.openai_server import ScriptedOpenAIServer

U1 = {"prompt_tokens": 101, "completion_tokens": 17, "total_tokens": 118}
U2 = {"prompt_tokens": 150, "completion_tokens": 9, "total_tokens": 159}


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


async def test_run_reports_exact_usage_total(server):
    server.script.extend(
        [("reply", "```python\nx = 1\n```", "stop", U1), ("reply", "done", "stop", U2)]
    )
    model = LiteLLMModel("openai/test-model", api_key="local", api_base=server.base_url)
    response = await CaveAgent(model).run("go")
    assert response.status is AgentStatus.COMPLETED
    assert response.usage.prompt_tokens == 251 and response.usage.completion_tokens == 26
    assert response.usage.total_tokens == 277 and response.usage.model_calls == 2


async def test_bad_request_ends_run_with_clear_status(server):
    server.script.extend(
        [
            ("status", 400, {}, {"error": {"message": "unknown parameter foo"}}),
            ("reply", "fine", "stop", U1),
        ]
    )
    model = LiteLLMModel("openai/test-model", api_key="local", api_base=server.base_url)
    agent = CaveAgent(model)
    response = await agent.run("go")
    assert response.status is AgentStatus.ERROR and "unknown parameter" in response.content
    assert (await agent.run("again")).status is AgentStatus.COMPLETED


async def test_gives_up_after_max_retries(server):
    server.script.extend([("status", 503, {}, {"error": {"message": "down"}})] * 3)
    model = LiteLLMModel(
        "openai/test-model",
        api_key="local",
        api_base=server.base_url,
        max_retries=2,
        retry_initial=0.01,
        retry_max=0.02,
    )
    with pytest.raises(ModelError, match="gave up after 3 attempts"):
        await model.complete([{"role": "user", "content": "hi"}])


async def test_extra_kwargs_reach_the_server(server):
    server.script.append(("reply", "ok", "stop", U1))
    model = LiteLLMModel(
        "openai/test-model", api_key="local", api_base=server.base_url, temperature=0, max_tokens=33
    )
    await model.complete([{"role": "user", "content": "hi"}])
    assert server.requests[0]["temperature"] == 0 and server.requests[0]["max_tokens"] == 33


async def test_a_slow_first_token_within_its_limit_is_not_cut_by_the_idle_limit(server):
    """The idle limit starts with the first text: a long wait for it is the first token's."""
    server.script.append(("reply", "hello there", "stop", U1))
    server.delay_first = 0.8  # before the first chunk
    model = LiteLLMModel(
        "openai/test-model",
        api_key="local",
        api_base=server.base_url,
        first_token_timeout=20,
        stream_idle_timeout=0.3,
    )
    text, completion = await model.complete([{"role": "user", "content": "hi"}])
    assert text == "hello there" and completion.finish_reason == "stop"
