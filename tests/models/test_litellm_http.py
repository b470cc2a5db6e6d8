"""LiteLLMModel over real HTTP against a scripted OpenAI-compatible server on 127.0.0.1."""

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.models.base import ContextOverflowError, ModelError
from cave_tui.models.litellm_model import LiteLLMModel
from tests.helpers.openai_server import ScriptedOpenAIServer

U1 = {"prompt_tokens": 101, "completion_tokens": 17, "total_tokens": 118}
U2 = {"prompt_tokens": 150, "completion_tokens": 9, "total_tokens": 159}
U3 = {"prompt_tokens": 170, "completion_tokens": 5, "total_tokens": 175}


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


@pytest.mark.parametrize("stream", [True, False])
async def test_agent_survives_429_500_drop_and_length(server, stream):
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
    model = LiteLLMModel(
        "openai/test-model",
        api_key="local",
        api_base=server.base_url,
        stream=stream,
        retry_initial=0.05,
        retry_max=0.2,
    )
    agent = CaveAgent(model)
    events = [e async for e in agent.stream_events("compute")]
    assert events[-1].type is EventType.FINAL_RESPONSE
    assert events[-1].content == "The answer is 42."
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
    if stream:
        assert all(r.get("stream_options") == {"include_usage": True} for r in server.requests)
    # The continuation request carried the partial reply and the resume prompt.
    continuation = server.requests[-2]["messages"]
    assert continuation[-2]["role"] == "assistant" and continuation[-2]["content"].endswith("6 *")


async def test_run_reports_exact_usage_total(server):
    server.script.extend(
        [("reply", "```python\nx = 1\n```", "stop", U1), ("reply", "done", "stop", U2)]
    )
    model = LiteLLMModel("openai/test-model", api_key="local", api_base=server.base_url)
    response = await CaveAgent(model).run("go")
    assert response.status is AgentStatus.COMPLETED
    assert response.usage.prompt_tokens == 251 and response.usage.completion_tokens == 26
    assert response.usage.total_tokens == 277 and response.usage.model_calls == 2


async def test_context_overflow_is_classified_and_not_retried(server):
    server.script.append(
        (
            "status",
            400,
            {},
            {
                "error": {
                    "message": "the request exceeds the available context size, try increasing it"
                }
            },
        )
    )
    model = LiteLLMModel("openai/test-model", api_key="local", api_base=server.base_url)
    with pytest.raises(ContextOverflowError):
        await model.complete([{"role": "user", "content": "hi"}])
    assert len(server.requests) == 1


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
