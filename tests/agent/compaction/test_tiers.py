"""Each compaction tier, with a small context window and a scripted model."""

from __future__ import annotations

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.agent.compaction import CLEARED, Compactor
from cave_tui.agent.summarizer import SUMMARY_ACK, SUMMARY_SYSTEM
from cave_tui.models import ModelError
from cave_tui.models.tokens import count_messages
from cave_tui.skills import Skill
from tests.agent.compaction.conftest import RoutingModel, numbers, summary_reply


def code_step(i: int) -> str:
    """A short cell whose output is about 300 tokens."""
    code = f"v{i} = {i}\nprint(' '.join(str(n) for n in range({i * 1000}, {i * 1000 + 150})))"
    return f"Step {i}.\n```python\n{code}\n```"


def chat_history(turns: int) -> list[dict[str, str]]:
    """Question/answer turns of about 450 tokens each (no code, so tier 1 has nothing)."""
    history = []
    for i in range(turns):
        history.append({"role": "user", "content": f"Question {i}: {numbers(0, 100)}"})
        history.append({"role": "assistant", "content": f"Answer {i}: {numbers(0, 120)}"})
    return history


async def test_tier1_clears_old_results_and_keeps_recent_ones():
    model = RoutingModel([*(code_step(i) for i in range(6)), "All six steps ran."])
    agent = CaveAgent(model, context_window=3200, max_steps=12)
    events = [e async for e in agent.stream_events("run the eight steps")]
    compacted = [e for e in events if e.type is EventType.COMPACTED]
    assert compacted, "the window was exceeded, so compaction must have run"
    assert all(e.tier == 1 for e in compacted)
    assert all(e.tokens_after < e.tokens_before for e in compacted)
    starting = [e for e in events if e.type is EventType.COMPACTING]
    assert [e.tokens_before for e in starting] == [e.tokens_before for e in compacted]
    assert model.summaries.requests == []  # tier 1 was enough: no model call
    observations = [m for m in agent.history if m["role"] == "user"][1:]
    cleared = [m for m in observations if m["content"].startswith(CLEARED)]
    intact = [m for m in observations if not m["content"].startswith(CLEARED)]
    assert cleared and len(intact) >= agent.compactor.keep_results
    assert observations.index(cleared[-1]) < observations.index(intact[0])  # oldest go first
    assert "5149" in observations[-1]["content"]
    for request in model.agent.requests:
        assert request[0]["role"] == "system"  # always kept, rebuilt by the agent
        assert count_messages(request) <= 3200
    # The runtime was not touched: values made before the clearing are live and listed.
    assert await agent.runtime.retrieve("v0") == 0
    assert "- v0: int = 0" in model.agent.requests[-1][-1]["content"]


async def test_tier1_keeps_skill_instructions():
    skill = Skill(name="rules", description="House rules.", body_content="RULE: always say please.")
    activate = "```python\nactivate_skill('rules')\nprint(*range(300))\n```"
    replies = [activate, *(code_step(i) for i in range(5)), "ok"]
    model = RoutingModel(replies)
    agent = CaveAgent(model, context_window=3200, max_steps=12, skills=[skill])
    await agent.run("go")
    first_observation = agent.history[2]["content"]
    assert first_observation.startswith(CLEARED)
    assert "299" not in first_observation  # the printed output went
    assert "RULE: always say please." in first_observation  # the instructions stayed


async def test_tier2_summarises_older_messages_and_counts_its_usage():
    model = RoutingModel(
        ["Final answer."], [summary_reply("The user asked six questions; answers listed numbers.")]
    )
    agent = CaveAgent(model, context_window=3000, messages=chat_history(6))
    events = [e async for e in agent.stream_events("And the last question?")]
    compacted = [e for e in events if e.type is EventType.COMPACTED]
    assert [e.tier for e in compacted] == [2]
    assert compacted[0].tokens_after < compacted[0].tokens_before * 0.75
    # The summariser was asked for an analysis and a summary; only the summary is kept.
    (summary_request,) = model.summaries.requests
    assert summary_request[0]["content"] == SUMMARY_SYSTEM
    assert "<analysis>" in SUMMARY_SYSTEM and "<summary>" in SUMMARY_SYSTEM
    assert "Question 0" in summary_request[1]["content"]
    first, second = agent.history[0], agent.history[1]
    assert first["role"] == "user" and "The user asked six questions" in first["content"]
    assert "SCRATCHPAD" not in first["content"]
    assert second == {"role": "assistant", "content": SUMMARY_ACK}
    # The recent messages are kept verbatim; the oldest are gone.
    texts = [m["content"] for m in agent.history]
    assert texts[-2:] == ["And the last question?", "Final answer."]
    assert any(t.startswith("Question 5") for t in texts)
    assert not any(t.startswith("Question 0") for t in texts)
    # The agent's request starts with the system prompt, then the summary, within budget.
    (request,) = model.agent.requests
    assert (
        request[0]["role"] == "system" and "The user asked six questions" in request[1]["content"]
    )
    assert count_messages(request) == compacted[0].tokens_after
    # Usage includes the summariser's call, and a usage event announced it.
    summary_usage = [e for e in events if e.type is EventType.USAGE and e.content == "compaction"]
    assert len(summary_usage) == 1
    assert summary_usage[0].prompt_tokens == count_messages(summary_request)
    assert agent.usage.model_calls == 2
    assert agent.usage.prompt_tokens == count_messages(request) + count_messages(summary_request)


async def test_later_summaries_update_the_earlier_one_in_chunks():
    model = RoutingModel(
        ["one", "two"],
        [summary_reply("FIRST SUMMARY"), summary_reply("SECOND"), summary_reply("THIRD")],
    )
    agent = CaveAgent(model, context_window=3000, messages=chat_history(6))
    await agent.run("next")
    assert "FIRST SUMMARY" in agent.history[0]["content"]
    agent.history.extend(chat_history(5))
    await agent.run("again")
    # The new region is larger than one summary request may be: it is folded in two
    # chunks, each updating the running summary (never re-summarising a summary).
    _, second, third = model.summaries.requests
    assert "<existing_summary>\nFIRST SUMMARY\n</existing_summary>" in second[1]["content"]
    assert "<existing_summary>\nSECOND\n</existing_summary>" in third[1]["content"]
    assert "FIRST SUMMARY" not in second[1]["content"].split("</existing_summary>")[1]
    assert "THIRD" in agent.history[0]["content"]
    assert "FIRST SUMMARY" not in agent.history[0]["content"]
    assert count_messages(model.agent.requests[-1]) <= agent.compactor.threshold


async def test_run_usage_includes_summariser_calls():
    model = RoutingModel(["third"], [summary_reply("Two long answers of numbers.")])
    agent = CaveAgent(model, context_window=3000, messages=chat_history(6))
    response = await agent.run("third")
    assert len(model.summaries.requests) == 1
    assert response.usage.model_calls == 2  # the agent's call plus the summary
    summary_tokens = count_messages(model.summaries.requests[0])
    agent_tokens = count_messages(model.agent.requests[-1])
    assert response.usage.prompt_tokens == summary_tokens + agent_tokens
    assert response.usage.completion_tokens > 2  # the summary's completion counted too


async def test_tier3_trims_when_the_summariser_fails():
    model = RoutingModel(["still here"], [ModelError("summariser down")])
    agent = CaveAgent(model, context_window=2000, messages=chat_history(5))
    events = [e async for e in agent.stream_events("are you there?")]
    notices = [e.content for e in events if e.type is EventType.NOTICE]
    assert any("summary failed" in n and "summariser down" in n for n in notices)
    compacted = [e for e in events if e.type is EventType.COMPACTED]
    assert [e.tier for e in compacted] == [3]
    assert "earlier messages were removed" in agent.history[0]["content"]
    assert agent.compactor.breaker.failures == 1
    final = [e for e in events if e.type is EventType.FINAL_RESPONSE]
    assert final[0].content == "still here"
    (request,) = model.agent.requests
    assert count_messages(request) <= agent.compactor.target
    assert request[-1]["content"].endswith("\n\nare you there?")  # after the namespace


async def test_tier3_shortens_one_huge_message():
    model = RoutingModel(["fine"], [])
    agent = CaveAgent(model, context_window=1000)
    response = await agent.run("Please read this: " + numbers(0, 2000))
    assert response.status is AgentStatus.COMPLETED
    (request,) = model.agent.requests
    assert count_messages(request) < 1000
    assert "characters elided" in request[1]["content"]
    assert "\n\nPlease read this: 0 1 2" in request[1]["content"]  # after the namespace


async def test_compactor_validates_its_settings():
    agent = CaveAgent(RoutingModel([]))
    for bad in ({"context_window": 100}, {"context_window": 4000, "target_ratio": 0.9}):
        try:
            Compactor(agent, **bad)
        except ValueError:
            continue
        raise AssertionError(f"accepted {bad}")


async def test_nothing_to_compact_is_not_retried_until_the_history_changes():
    # The system prompt alone is over this tiny window: nothing in the history can help.
    model = RoutingModel(["```python\nx = 1\n```", "```python\ny = 2\n```", "done"])
    agent = CaveAgent(model, context_window=512, instructions="word " * 500)
    events = [e async for e in agent.stream_events("hi")]
    assert events[-1].content == "done"
    compacted = [e for e in events if e.type is EventType.COMPACTED]
    assert compacted and all(e.tokens_after <= e.tokens_before for e in compacted)
    assert compacted[0].tier == 0 and "nothing left to compact" in compacted[0].content
    agent.history[:] = [{"role": "user", "content": "hi"}]
    first = [e async for e in agent.compactor.maybe_compact(9)]
    again = [e async for e in agent.compactor.maybe_compact(10)]
    assert [e.type for e in first] == [EventType.COMPACTING, EventType.COMPACTED]
    assert again == []  # same history, same futile result: not repeated
