"""How a run ended: `AgentStatus` and `AgentResponse` (upstream's names kept as aliases)."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum

from cave_tui.models.base import Usage


class AgentStatus(StrEnum):
    """How a run ended. `SUCCESS` is upstream's name for `COMPLETED` (the same member)."""

    COMPLETED = "completed"
    MAX_STEPS_REACHED = "max_steps_reached"
    ERROR = "error"
    CANCELLED = "cancelled"
    SUCCESS = "completed"  # upstream CaveAgent's ExecutionStatus.SUCCESS


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

    @property
    def completed(self) -> bool:
        return self.status is AgentStatus.COMPLETED

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
