"""The summariser's circuit breaker: opens after 3 failures, half-opens after a cool-down."""

from __future__ import annotations

from cave_tui import CaveAgent
from cave_tui.agent import EventType
from cave_tui.agent.breaker import BreakerState, CircuitBreaker
from cave_tui.models import ModelError
from tests.agent.compaction.conftest import RoutingModel, summary_reply
from tests.agent.compaction.test_tiers import chat_history


class FakeClock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def test_breaker_states():
    clock = FakeClock()
    breaker = CircuitBreaker(max_failures=3, cooldown=60, clock=clock)
    for _ in range(2):
        breaker.record_failure()
        assert breaker.state is BreakerState.CLOSED and breaker.allow()
    breaker.record_failure()
    assert breaker.state is BreakerState.OPEN and not breaker.allow()
    clock.now += 59
    assert breaker.retry_in() == 1 and not breaker.allow()
    clock.now += 1
    assert breaker.state is BreakerState.HALF_OPEN and breaker.allow()
    breaker.record_failure()  # the trial failed: open again at once, for a full cool-down
    assert breaker.state is BreakerState.OPEN and breaker.retry_in() == 60
    clock.now += 60
    assert breaker.allow()
    breaker.record_success()
    assert breaker.state is BreakerState.CLOSED and breaker.failures == 0


async def test_agent_breaker_opens_then_half_opens_and_closes():
    clock = FakeClock()
    down = ModelError("summariser down")
    model = RoutingModel(
        [f"answer {i}" for i in range(7)],
        [down, down, down, down, summary_reply("Back in business.")],
    )
    agent = CaveAgent(model, context_window=3000)
    agent.compactor.breaker.clock = clock
    agent.compactor.breaker.cooldown = 120  # configurable cool-down

    async def turn() -> list:
        agent.history[:] = chat_history(6)  # over the threshold again
        return [e async for e in agent.stream_events("next question")]

    for expected in (1, 2, 3):
        events = await turn()
        assert len(model.summaries.requests) == expected
        assert [e.tier for e in events if e.type is EventType.COMPACTED] == [3]
    assert agent.compactor.breaker.state is BreakerState.OPEN

    events = await turn()  # open: no summary attempt, trimmed instead
    assert len(model.summaries.requests) == 3
    notices = [e.content for e in events if e.type is EventType.NOTICE]
    assert any("summaries paused after 3 failures" in n for n in notices)
    assert [e.tier for e in events if e.type is EventType.COMPACTED] == [3]
    assert any(e.type is EventType.FINAL_RESPONSE for e in events)  # the turn still worked

    clock.now += 121  # half-open: one trial, which fails and re-opens
    await turn()
    assert len(model.summaries.requests) == 4
    assert agent.compactor.breaker.state is BreakerState.OPEN
    await turn()
    assert len(model.summaries.requests) == 4

    clock.now += 121  # half-open again: this trial succeeds and closes the breaker
    events = await turn()
    assert len(model.summaries.requests) == 5
    assert [e.tier for e in events if e.type is EventType.COMPACTED] == [2]
    assert agent.compactor.breaker.state is BreakerState.CLOSED
    assert "Back in business." in agent.history[0]["content"]
