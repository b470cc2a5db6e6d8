"""How a run ended: `AgentStatus` and `AgentResponse` (upstream's names kept as aliases)."""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field
from enum import StrEnum

from cave_tui.agent.events import AnswerSupport
from cave_tui.agent.stop_reason import StopReason
from cave_tui.models.base import Usage


class AgentStatus(StrEnum):
    """How a run ended. `SUCCESS` is upstream's name for `COMPLETED` (the same member)."""

    COMPLETED = "completed"
    MAX_STEPS_REACHED = "max_steps_reached"
    ERROR = "error"
    CANCELLED = "cancelled"
    BUDGET_EXHAUSTED = "budget_exhausted"  # a token budget of the run was crossed
    TIMEOUT = "timeout"  # the run's `max_run_time` elapsed
    SUCCESS = "completed"  # upstream CaveAgent's ExecutionStatus.SUCCESS


# How each status reads as upstream 0.8's `StopReason` (ERROR: the loop ends on an error
# only when the model layer fails; a cell's error is an observation, not an end).
STOP_REASONS = {
    AgentStatus.COMPLETED: StopReason.COMPLETED,
    AgentStatus.MAX_STEPS_REACHED: StopReason.MAX_STEPS,
    AgentStatus.ERROR: StopReason.MODEL_ERROR,
    AgentStatus.CANCELLED: StopReason.CANCELLED,
    AgentStatus.BUDGET_EXHAUSTED: StopReason.BUDGET_EXHAUSTED,
    AgentStatus.TIMEOUT: StopReason.TIMEOUT,
}


def stop_reason_of(status: AgentStatus) -> StopReason:
    """The 0.8 stop reason of a run that ended with *status*."""
    return STOP_REASONS[status]


def status_of(reason: StopReason) -> AgentStatus:
    """The 0.7 status of a run that ended for 0.8's *reason* (a runtime or internal error
    is an ERROR)."""
    return next((s for s, r in STOP_REASONS.items() if r is reason), AgentStatus.ERROR)


ExecutionStatus = AgentStatus  # upstream CaveAgent's name for the status enum


@dataclass
class AgentResponse:
    """The outcome of one `CaveAgent.run()`."""

    content: str
    status: AgentStatus
    steps: int
    code_snippets: list[str] = field(default_factory=list)
    usage: Usage = field(default_factory=Usage)
    elapsed: float = 0.0
    error: str | None = None
    max_steps: int = 0  # the limit the run had
    interventions: dict[str, int] = field(default_factory=dict)  # policy name -> count
    # What backs a completed run's answer: NONE when no successful cell does (it is marked).
    support: AnswerSupport = AnswerSupport.CELL
    # 0.8's reason when `status` alone does not say it (RUNTIME_ERROR is an ERROR).
    reason: StopReason | None = None

    @property
    def completed(self) -> bool:
        return self.status is AgentStatus.COMPLETED

    @property
    def stop_reason(self) -> StopReason:
        """Upstream 0.8's name for why the run ended (read from `status`, or `reason`)."""
        return self.reason or stop_reason_of(self.status)

    @property
    def steps_taken(self) -> int:
        """Upstream's name for `steps`."""
        return self.steps

    @property
    def token_usage(self) -> Usage:
        """Upstream's name for `usage` (prompt_tokens, completion_tokens, total_tokens)."""
        return self.usage


@dataclass
class RunDone:
    """The end-of-run marker of the agent's internal stream, carrying the response."""

    response: AgentResponse


@dataclass
class RunTally:
    """What one run adds up to as it goes (cells, usage, interventions), for its `AgentResponse`."""

    max_steps: int
    started: float = field(default_factory=time.monotonic)
    usage: Usage = field(default_factory=Usage)
    snippets: list[str] = field(default_factory=list)
    interventions: Counter[str] = field(default_factory=Counter)

    def done(
        self,
        status: AgentStatus,
        content: str,
        steps: int,
        error: str | None,
        support: AnswerSupport = AnswerSupport.CELL,
        reason: StopReason | None = None,
    ) -> RunDone:
        """The end-of-run marker with the response this tally adds up to."""
        return RunDone(
            AgentResponse(
                content=content,
                status=status,
                steps=steps,
                code_snippets=self.snippets,
                usage=self.usage,
                elapsed=time.monotonic() - self.started,
                error=error,
                max_steps=self.max_steps,
                interventions=dict(self.interventions),
                support=support,
                reason=reason,
            )
        )
