"""Upstream's `cave_agent.types`: message roles and classes, and the event types.

`EventType` and `Event` are cave's own (`cave_tui.agent.events`): the same thing,
with the same `.type` / `.content` and the same type strings, plus cave-only kinds.
The message classes are upstream's; cave keeps its history as OpenAI-style dicts,
so each message converts with `to_dict()` (the role the provider sees), and
`CaveAgent(messages=[...])` accepts them.
"""

from __future__ import annotations

from collections.abc import Callable
from enum import StrEnum
from typing import Any

from cave_tui.agent.events import Event, EventType


class MessageRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    CODE_EXECUTION = "code_execution"
    EXECUTION_RESULT = "execution_result"


# Upstream's internal roles, as the provider sees them.
_LLM_ROLE = {
    MessageRole.CODE_EXECUTION: MessageRole.ASSISTANT,
    MessageRole.EXECUTION_RESULT: MessageRole.USER,
}


class Message:
    """One message of the conversation (upstream signature: `Message(content, role)`)."""

    def __init__(self, content: str, role: MessageRole) -> None:
        self.content = content
        self.role = role

    @property
    def llm_role(self) -> MessageRole:
        """The role sent to the provider (code runs are the assistant's, results the user's)."""
        return _LLM_ROLE.get(self.role, self.role)

    def to_dict(self) -> dict[str, Any]:
        """The OpenAI chat form cave keeps in `agent.history`."""
        return {"role": self.llm_role.value, "content": self.content}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(content={self.content!r})"


class SystemMessage(Message):
    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.SYSTEM)


class UserMessage(Message):
    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.USER)


class AssistantMessage(Message):
    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.ASSISTANT)


class CodeExecutionMessage(Message):
    """The assistant's reply that held the code that was run."""

    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.CODE_EXECUTION)


class ExecutionResultMessage(Message):
    """What running that code printed (fed back to the model as the user's turn)."""

    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.EXECUTION_RESULT)


_BY_ROLE: dict[str, Callable[[str], Message]] = {
    "system": SystemMessage,
    "user": UserMessage,
    "assistant": AssistantMessage,
}


def message_from_dict(data: dict[str, Any]) -> Message:
    """The upstream message for one of cave's history dicts."""
    cls = _BY_ROLE.get(str(data.get("role")))
    content = str(data.get("content") or "")
    if cls is None:
        return Message(content, MessageRole(str(data.get("role"))))
    return cls(content)


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
