"""Upstream's `cave_agent.types` (0.7): message roles and classes, and the event types.

`EventType` and `Event` are cave's own (`cave_tui.agent.events`): the same thing,
with the same `.type` / `.content` and the same type strings, plus cave-only kinds.
The message classes are 0.8's `cave_tui.messages`, where they moved: the same classes,
each also the `{"role", "content"}` dict cave keeps in `agent.history`.
"""

from __future__ import annotations

from cave_tui.agent.events import Event, EventType
from cave_tui.messages import (
    AssistantMessage,
    CodeExecutionMessage,
    ExecutionResultMessage,
    Message,
    MessageRole,
    SystemMessage,
    UserMessage,
    message_from_dict,
)

__all__ = [
    "AssistantMessage",
    "CodeExecutionMessage",
    "Event",
    "EventType",
    "ExecutionResultMessage",
    "Message",
    "MessageRole",
    "SystemMessage",
    "UserMessage",
    "message_from_dict",
]
