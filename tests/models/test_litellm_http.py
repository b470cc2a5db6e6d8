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


async def test_a_stream_that_stalls_mid_reply_ends_with_a_clear_error(server):
    """Chunks, then silence: the idle timeout ends it, retried once, naming model and URL."""
    import time

    from cave_tui.models.base import StreamStalledError

    server.script.extend([("stall", 3), ("stall", 2)])
    model = LiteLLMModel(
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
        await model.complete([{"role": "user", "content": "hi"}])
    # a hang guard only (litellm's first import is in it): the message says the idle limit
    # ended it, and the server's stalls (3 s, 2 s) were not waited out
    assert time.monotonic() - started < 30
    message = str(caught.value)
    assert "openai/test-model" in message and server.base_url in message
    assert "mid-reply" in message and "0.5 s" in message
    assert len(server.requests) == 2  # one retry of a stalled stream, then it gives up


async def test_no_first_token_ends_at_the_first_token_timeout_without_retry(server):
    import time

    from cave_tui.models.base import StreamStalledError

    server.script.extend([("stall", 0), ("reply", "late", "stop", U1)])
    model = LiteLLMModel(
        "openai/test-model",
        api_key="local",
        api_base=server.base_url,
        first_token_timeout=0.5,
        stream_idle_timeout=30,
    )
    started = time.monotonic()
    with pytest.raises(StreamStalledError, match=r"no reply within 0.5 s") as caught:
        await model.complete([{"role": "user", "content": "hi"}])
    assert time.monotonic() - started < 20  # not the 30 s idle limit (litellm's import is in it)
    assert caught.value.first and server.base_url in str(caught.value)
    assert len(server.requests) == 1


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
