"""Upstream CaveAgent 0.8's `cave_agent.events`: the events of `stream_events`, by class.

cave's events (`cave_tui.agent.events`) carry both generations' fields: 0.7's `.type` and
`.content`, and 0.8's names, so one stream serves code written for either. Here are 0.8's
names for them. `UserPromptEvent` is cave's first event (the user's turn); `StoppedEvent`
is always the last. `ExecutionResultEvent` matches a cell's end, successful or not.
The reasoning and status classes are defined for code that matches on them; cave streams
no reasoning trace and reports compaction and timeouts with its own events
(CompactingEvent/CompactedEvent, an ExecutionErrorEvent with `timed_out`).
"""

from __future__ import annotations

from abc import ABCMeta
from dataclasses import dataclass

from cave_tui.agent.events import (
    CodeEvent,
    CompactedEvent,
    CompactingEvent,
    Event,
    ExecutionResultEvent,
    FinalResponseEvent,
    OutputRecoveryEvent,
    SecurityErrorEvent,
    StoppedEvent,
    TextEvent,
)
from cave_tui.agent.events import UserEvent as UserPromptEvent
from cave_tui.agent.stop_reason import StatusType, StopReason

__all__ = [
    "CodeEvent",
    "Event",
    "ExecutionResultEvent",
    "ExecutionTimeoutEvent",
    "FinalResponseEvent",
    "SecurityErrorEvent",
    "StatusEvent",
    "StatusType",
    "StopReason",
    "StoppedEvent",
    "TextEvent",
    "ThinkingChunkEvent",
    "ThinkingEvent",
    "UpstreamOnlyEvent",
    "UserPromptEvent",
]


@dataclass(frozen=True)
class ThinkingChunkEvent:
    """One chunk of a model's reasoning trace (0.8's; cave's models send none)."""

    content: str


@dataclass(frozen=True)
class ThinkingEvent:
    """A completed reasoning segment (0.8's; never emitted by cave)."""

    content: str
    duration_ms: int


@dataclass(frozen=True)
class ExecutionTimeoutEvent:
    """0.8's timed-out cell; cave reports it as an ExecutionErrorEvent with `timed_out`."""

    timeout: float
    state_lost: bool = False


@dataclass(frozen=True)
class StatusEvent(metaclass=ABCMeta):
    """0.8's compaction/recovery status. cave's CompactingEvent, CompactedEvent and
    OutputRecoveryEvent are registered here, so `case StatusEvent(status=...)` matches
    them (their `status`, `before`, `after`, `recovery`, `max_recoveries` are 0.8's)."""

    status: StatusType
    before: int | None = None
    after: int | None = None
    recovery: int | None = None
    max_recoveries: int | None = None


StatusEvent.register(OutputRecoveryEvent)
StatusEvent.register(CompactingEvent)
StatusEvent.register(CompactedEvent)

UpstreamOnlyEvent = ThinkingChunkEvent | ThinkingEvent | ExecutionTimeoutEvent | StatusEvent
"""0.8's events cave never emits: a caller's own stream may carry them, and
`cave_tui.renderers` draws them beside cave's."""
