"""Upstream's `cave_agent.compaction` under cave: 0.8's `Compactor` (a policy for
`CaveAgent(compactor=...)`, whose breaker re-closes) and 0.7's public functions, all over
cave's compactor."""

from __future__ import annotations

from typing import Any

from cave_tui import CaveAgent
from cave_tui.compaction import (
    COOLDOWN_ATTEMPTS,
    CompactionState,
    Compactor,
    full_compact_needed,
    recover_from_overflow,
)
from cave_tui.models import ModelError, ScriptedModel
from tests.agent.compaction.conftest import numbers, summary_reply

SYSTEM = {"role": "system", "content": "You are terse."}


def chat(turns: int) -> list[dict[str, str]]:
    """Question/answer turns of about 450 tokens each."""
    history: list[dict[str, str]] = []
    for i in range(turns):
        history.append({"role": "user", "content": f"Question {i}: {numbers(0, 100)}"})
        history.append({"role": "assistant", "content": f"Answer {i}: {numbers(0, 120)}"})
    return history


class FailingModel(ScriptedModel):
    """A summariser that always fails, counting the calls."""

    def __init__(self) -> None:
        super().__init__([])
        self.calls = 0

    def stream(self, messages: Any, **kwargs: Any) -> Any:
        self.calls += 1
        raise ModelError("summariser down")


def test_the_breaker_opens_after_three_failures_and_recloses_after_its_cooldown() -> None:
    state = CompactionState()
    for _ in range(3):
        assert not state.should_skip()
        state.record_failure()
    assert state.is_open
    assert [state.should_skip() for _ in range(COOLDOWN_ATTEMPTS)] == [True] * COOLDOWN_ATTEMPTS
    assert not state.is_open and state.consecutive_failures == 0
    assert not state.should_skip()  # a real trial again
    state.record_failure()
    assert not state.is_open  # one failure after re-closing does not re-open it


async def test_summarize_behind_the_breaker_over_cave_s_compactor() -> None:
    summariser = FailingModel()
    compactor = Compactor(summariser, context_window=2000)
    messages = [SYSTEM, *chat(8)]
    for _ in range(3):
        out = await compactor.summarize(messages)
        assert out[0] is SYSTEM  # the system message is kept as it is
    assert summariser.calls >= 3 and compactor.state.is_open
    before = summariser.calls
    for _ in range(COOLDOWN_ATTEMPTS):
        await compactor.summarize(messages)
    assert summariser.calls == before  # skipped while open: no model call
    await compactor.summarize(messages)
    assert summariser.calls > before  # re-closed: the model is tried again


async def test_a_working_summariser_replaces_the_older_part() -> None:
    summariser = ScriptedModel([summary_reply("They asked 8 questions.")] * 10)
    compactor = Compactor(summariser, context_window=2000)
    out = await compactor.summarize([SYSTEM, *chat(8)])
    assert out[0] is SYSTEM and len(out) < 17
    assert any("They asked 8 questions." in str(m["content"]) for m in out)
    assert not compactor.state.is_open and compactor.state.consecutive_failures == 0


async def test_an_agent_compacts_with_the_policy_s_window_and_model() -> None:
    summariser = ScriptedModel([summary_reply("Earlier: eight questions.")] * 3)
    policy = Compactor(summariser, context_window=3000)
    agent = CaveAgent(ScriptedModel(["fine"]), compactor=policy, messages=chat(8), display=False)
    assert agent.compactor is not None and agent.compactor.context_window == 3000
    assert agent.compactor.breaker is policy.breaker
    response = await agent.run("are you there?")
    assert response.content == "fine"
    assert summariser.requests, "the policy's model wrote the summary"
    assert any("Earlier: eight questions." in str(m["content"]) for m in agent.history)


def test_microcompact_and_full_compact_needed() -> None:
    small = [SYSTEM, *chat(1)]
    assert not full_compact_needed(small, context_window=128_000)
    assert full_compact_needed([SYSTEM, *chat(8)], context_window=2000)
    assert not full_compact_needed(small, context_window=2000, api_token_count=10)
    compactor = Compactor(ScriptedModel([]), context_window=2000)
    same, needed = compactor.microcompact(small)
    assert same is small and not needed
    _, needed = compactor.microcompact([SYSTEM, *chat(8)])
    assert needed  # no cell results to clear: only a summary would help
    anchor = compactor.anchor(small, 5000)
    assert compactor.estimate_tokens(small, anchor=anchor) == 5000


async def test_recover_from_overflow_keeps_the_system_message_and_the_recent_turns() -> None:
    summariser = ScriptedModel([summary_reply("Older questions, answered.")] * 10)
    messages = [SYSTEM, *chat(8)]
    out = await recover_from_overflow(messages, summariser, context_window=2000)
    assert out[0] is SYSTEM and len(out) < len(messages)
    assert out[-1] is messages[-1]
