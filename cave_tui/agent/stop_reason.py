"""Why a run ended, in upstream CaveAgent 0.8's words (`StopReason`), beside 0.7's `status`.

cave's `AgentStatus` (0.7's `status`) stays the record; `StopReason` is read from it, so a
run has one outcome under both names. `StatusType` names 0.8's `StatusEvent` kinds.
"""

from __future__ import annotations

from enum import StrEnum


class StopReason(StrEnum):
    """Why the agent loop ended (upstream 0.8's `AgentResponse.stop_reason`)."""

    COMPLETED = "completed"  # the model answered
    MAX_STEPS = "max_steps"  # `max_steps` model calls without an answer
    TIMEOUT = "timeout"  # `max_run_time` elapsed (checked between steps)
    BUDGET_EXHAUSTED = "budget_exhausted"  # a token budget was crossed (checked between steps)
    CANCELLED = "cancelled"  # the run was stopped or its task cancelled
    MODEL_ERROR = "model_error"  # the model layer failed
    RUNTIME_ERROR = "runtime_error"  # the runtime failed (not code that raised)
    INTERNAL_ERROR = "internal_error"  # a defect in cave: the error is re-raised after


class StatusType(StrEnum):
    """The kinds of upstream 0.8's `StatusEvent` (cave emits CompactingEvent/CompactedEvent)."""

    COMPACTING = "compacting"
    COMPACTED = "compacted"
    OUTPUT_RECOVERY = "output_recovery"
