"""A run's cost and time limits (upstream 0.8's `max_total_tokens`, `max_input_tokens`,
`max_output_tokens`, `max_run_time`), checked between steps: the step that crosses one
completes and is recorded, the next one does not start."""

from __future__ import annotations

import time
from dataclasses import dataclass

from cave_tui.agent.response import AgentStatus
from cave_tui.models.base import Usage


@dataclass(frozen=True)
class RunBudget:
    """Limits of one run; None leaves that side unbounded, 0 allows no step (as in 0.8)."""

    max_total_tokens: int | None = None
    max_input_tokens: int | None = None
    max_output_tokens: int | None = None
    max_run_time: float | None = None

    def __post_init__(self) -> None:
        for name in ("max_total_tokens", "max_input_tokens", "max_output_tokens", "max_run_time"):
            value = getattr(self, name)
            if value is not None and value < 0:
                raise ValueError(f"{name} must be zero or more, or None, not {value!r}")

    def allows_no_step(self) -> AgentStatus | None:
        """BUDGET_EXHAUSTED or TIMEOUT when a limit is 0: the run ends before its first
        step (any other limit is checked between steps, the first always runs)."""
        tokens = (self.max_total_tokens, self.max_input_tokens, self.max_output_tokens)
        if any(limit == 0 for limit in tokens):
            return AgentStatus.BUDGET_EXHAUSTED
        return AgentStatus.TIMEOUT if self.max_run_time == 0 else None

    def ended(self, usage: Usage, started: float) -> AgentStatus | None:
        """BUDGET_EXHAUSTED or TIMEOUT when the run so far (*usage*, since *started* on the
        monotonic clock) reached a limit, else None."""
        crossed = (
            (self.max_total_tokens, usage.total_tokens),
            (self.max_input_tokens, usage.prompt_tokens),
            (self.max_output_tokens, usage.completion_tokens),
        )
        if any(limit is not None and used >= limit for limit, used in crossed):
            return AgentStatus.BUDGET_EXHAUSTED
        if self.max_run_time is not None and time.monotonic() - started >= self.max_run_time:
            return AgentStatus.TIMEOUT
        return None
