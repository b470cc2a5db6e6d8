"""Reactive compaction when the provider says the prompt is too long, and provider counts."""

from __future__ import annotations

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.agent.summarizer import SUMMARY_SYSTEM
from cave_tui.models import ContextOverflowError
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.models.openai_http import OpenAIHTTPModel
from cave_tui.models.tokens import count_messages
from tests.agent.compaction.conftest import RoutingModel, summary_reply
from tests.agent.compaction.test_tiers import chat_history
from tests.helpers.openai_server import ScriptedOpenAIServer

LLAMA_CPP = "the request exceeds the available context size, try increasing it"


async def test_overflow_compacts_reactively_and_retries():
    model = RoutingModel(
        [ContextOverflowError(LLAMA_CPP), "Here is the answer."],
        [summary_reply("Six questions about numbers were answered.")] * 5,
    )
    # The configured window is generous: the server's real limit is smaller.
    agent = CaveAgent(model, context_window=100_000, messages=chat_history(6))
    events = [e async for e in agent.stream_events("one more?")]
    kinds = [e.type for e in events]
    assert EventType.ERROR not in kinds
    compacting = next(e for e in events if e.type is EventType.COMPACTING)
    compacted = next(e for e in events if e.type is EventType.COMPACTED)
    assert "rejected the prompt as too long" in compacting.content
    assert compacted.tier == 2 and compacted.tokens_after < compacted.tokens_before / 2
    assert events[-2].type is EventType.FINAL_RESPONSE
    assert events[-2].content == "Here is the answer."
    # It learnt that the real window is smaller than configured.
    assert agent.compactor.effective_window < 3000
    retried = model.agent.requests[1]
    assert count_messages(retried) < count_messages(model.agent.requests[0]) / 2
    assert "Six questions about numbers" in retried[1]["content"]
    assert retried[-1]["content"].endswith("\n\none more?")  # after the namespace


async def test_repeated_overflow_keeps_shrinking_until_it_fits():
    model = RoutingModel(
        [ContextOverflowError(LLAMA_CPP), ContextOverflowError(LLAMA_CPP), "fits now"],
        [summary_reply("S")] * 10,
    )
    agent = CaveAgent(model, context_window=100_000, messages=chat_history(8))
    response = await agent.run("and now?")
    assert response.status is AgentStatus.COMPLETED and response.content == "fits now"
    sizes = [count_messages(r) for r in model.agent.requests]
    assert sizes[0] > sizes[1] > sizes[2]
    # Rejected calls report no usage; the answer and every summary call do.
    assert response.usage.model_calls == 1 + len(model.summaries.requests)


async def test_overflow_when_the_summariser_is_down_trims():
    model = RoutingModel([ContextOverflowError(LLAMA_CPP), "ok"], [ContextOverflowError("too")])
    agent = CaveAgent(model, context_window=100_000, messages=chat_history(6))
    response = await agent.run("still alive?")
    assert response.status is AgentStatus.COMPLETED
    assert "earlier messages were removed" in agent.history[0]["content"]


U = {"prompt_tokens": 40, "completion_tokens": 5, "total_tokens": 45}


@pytest.fixture
def server():
    with ScriptedOpenAIServer() as srv:
        yield srv


def _error(message: str, kind: str) -> tuple:
    return ("status", 400, {}, {"error": {"message": message, "type": kind, "code": 400}})


@pytest.mark.parametrize(
    "rejection",
    [
        _error(LLAMA_CPP, "exceed_context_size_error"),
        _error(
            "This model's maximum context length is 4096 tokens. However, your messages "
            "resulted in 9000 tokens. Please reduce the length of the messages.",
            "invalid_request_error",
        ),
    ],
    ids=["llama.cpp", "openai"],
)
@pytest.mark.parametrize("client", [LiteLLMModel, OpenAIHTTPModel], ids=["litellm", "light"])
async def test_http_overflow_is_recovered(server, rejection, client):
    server.script.extend(
        [
            rejection,
            (
                "reply",
                "<analysis>x</analysis><summary>Numbers were discussed.</summary>",
                "stop",
                U,
            ),
            ("reply", "<summary>Numbers were discussed.</summary>", "stop", U),
            ("reply", "Recovered answer.", "stop", U),
        ]
    )
    model = client("openai/test", api_key="k", api_base=server.base_url, max_retries=0)
    agent = CaveAgent(model, context_window=32_000, messages=chat_history(6))
    response = await agent.run("what next?")
    assert response.status is AgentStatus.COMPLETED, response.error
    assert response.content == "Recovered answer."
    assert server.requests[1]["messages"][0]["content"] == SUMMARY_SYSTEM
    # The learnt window is small, so the region is summarised in two chunks.
    assert server.requests[2]["messages"][0]["content"] == SUMMARY_SYSTEM
    retried = server.requests[3]["messages"]
    assert "Numbers were discussed." in retried[1]["content"]
    assert response.usage.model_calls == 3  # two summary calls and the answer


async def test_provider_reported_prompt_tokens_drive_the_decision(server):
    # The server counts this prompt as 2,900 tokens (its own tokenizer); cl100k says ~800.
    big = {"prompt_tokens": 2900, "completion_tokens": 5, "total_tokens": 2905}
    server.script.extend(
        [("reply", "first answer", "stop", big), ("reply", "second answer", "stop", U)]
    )
    model = LiteLLMModel("openai/test", api_key="k", api_base=server.base_url, max_retries=0)
    agent = CaveAgent(model, context_window=3000, messages=chat_history(1))
    await agent.run("first")
    assert count_messages(await agent.build_request()) < 900  # far below what was reported
    events = [e async for e in agent.stream_events("second")]
    compacting = next(e for e in events if e.type is EventType.COMPACTING)
    # 2,900 reported for the last request, plus the messages added since, counted.
    assert compacting.tokens_before > 2900
    compacted = next(e for e in events if e.type is EventType.COMPACTED)
    assert compacted.tokens_after < compacted.tokens_before
    assert events[-1].content == "second answer"
    assert len(server.requests) == 2  # nothing old enough to summarise: no summary call
