"""A budget of 0 (0.8's `max_run_time=0.0`, or a token limit of 0) is accepted and allows
no step: the run ends before its first step with that limit's stop reason. Any other
limit is checked between steps, so the first step always runs."""

from __future__ import annotations

import pytest

from cave_tui import CaveAgent
from cave_tui.events import StoppedEvent, StopReason
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime

CODE = "```python\nran = True\n```"


@pytest.mark.parametrize(
    ("limit", "reason"),
    [
        ({"max_run_time": 0.0}, StopReason.TIMEOUT),
        ({"max_total_tokens": 0}, StopReason.BUDGET_EXHAUSTED),
        ({"max_output_tokens": 0}, StopReason.BUDGET_EXHAUSTED),
    ],
)
async def test_a_zero_limit_runs_no_step(limit: dict[str, float], reason: StopReason) -> None:
    runtime = IPythonRuntime()
    agent = CaveAgent(ScriptedModel([CODE] * 3), runtime=runtime, display=False, **limit)

    events = [e async for e in agent.stream_events("go")]

    assert isinstance(events[-1], StoppedEvent)
    assert events[-1].stop_reason is reason and events[-1].steps == 0
    response = await agent.run("again")
    assert response.stop_reason is reason and response.steps == 0
    with pytest.raises(KeyError):
        await runtime.get_from_namespace("ran")


async def test_a_tiny_positive_limit_still_runs_the_first_step() -> None:
    runtime = IPythonRuntime()
    agent = CaveAgent(ScriptedModel([CODE] * 3), runtime=runtime, display=False, max_run_time=1e-9)

    response = await agent.run("go")

    assert response.stop_reason is StopReason.TIMEOUT and response.steps == 1
    assert await runtime.get_from_namespace("ran") is True


def test_a_negative_limit_is_refused() -> None:
    with pytest.raises(ValueError, match="max_run_time must be zero or more"):
        CaveAgent(ScriptedModel([]), runtime=IPythonRuntime(), max_run_time=-1.0)
