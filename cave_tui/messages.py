"""Upstream CaveAgent's `cave_agent.messages` (0.8; 0.7's `cave_agent.types`): the
conversation's messages, by class.

`agent.messages` and `agent.history` hold these. Each is also cave's wire dict
(`{"role", "content"}`, the role a provider sees): a `Message` is a `dict`, so code that
reads `m["role"]`, `m["content"]`, `m.get(...)`, compares with a dict or writes it as JSON
keeps working. `.role` is the message's own role (`CODE_EXECUTION` for a reply whose code
ran, `EXECUTION_RESULT` for what running it gave), `["role"]` and `.wire_role` the
provider's (`assistant`, `user`).
"""

from __future__ import annotations

import copy
from collections.abc import Callable, Iterable, Mapping
from enum import StrEnum
from typing import Any


class MessageRole(StrEnum):
    SYSTEM = "system"
    USER = "user"
    ASSISTANT = "assistant"
    CODE_EXECUTION = "code_execution"
    EXECUTION_RESULT = "execution_result"


# The internal roles, as the provider sees them.
_WIRE_ROLE = {
    MessageRole.CODE_EXECUTION: MessageRole.ASSISTANT,
    MessageRole.EXECUTION_RESULT: MessageRole.USER,
}


class Message(dict[str, Any]):
    """One message (`Message(content, role)`), and its wire dict: `self["role"]` is
    `wire_role`, `self["content"]` is `content` (one value: setting either sets both)."""

    def __init__(self, content: str, role: MessageRole | str) -> None:
        own = MessageRole(role)
        super().__init__(role=_WIRE_ROLE.get(own, own).value, content=content)
        self.role = own

    @property
    def content(self) -> str:
        return str(self.get("content") or "")

    @content.setter
    def content(self, text: str) -> None:
        self["content"] = text

    @property
    def wire_role(self) -> str:
        """The role a provider sees (code runs are the assistant's, results the user's)."""
        return _WIRE_ROLE.get(self.role, self.role).value

    @property
    def llm_role(self) -> MessageRole:
        """`wire_role` as a `MessageRole` (cave's 0.7-era name)."""
        return _WIRE_ROLE.get(self.role, self.role)

    def to_dict(self) -> dict[str, Any]:
        """A plain copy of the wire dict."""
        return dict(self)

    def __repr__(self) -> str:
        preview = self.content[:40].replace("\n", " ")
        more = "…" if len(self.content) > 40 else ""
        return f"{type(self).__name__}({preview!r}{more})"


class SystemMessage(Message):
    """The system prompt."""

    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.SYSTEM)


class UserMessage(Message):
    """The user's request, or a note to the model in the user's turn."""

    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.USER)


class AssistantMessage(Message):
    """A reply of the model that ran no code (its answer, or a cut reply)."""

    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.ASSISTANT)


class SummaryMessage(UserMessage):
    """A compaction summary, sent as the user's turn; `body` is the summary alone."""

    def __init__(self, content: str, body: str) -> None:
        super().__init__(content)
        self.body = body


class SummaryAcknowledgementMessage(AssistantMessage):
    """The assistant turn paired with a `SummaryMessage`."""


class CodeExecutionMessage(Message):
    """A reply of the model whose code block the agent took to run."""

    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.CODE_EXECUTION)


class ExecutionResultMessage(Message):
    """The answer to a `CodeExecutionMessage`: what its cell gave (or why it did not run)."""

    def __init__(self, content: str) -> None:
        super().__init__(content, MessageRole.EXECUTION_RESULT)


_BY_ROLE: dict[str, Callable[[str], Message]] = {
    MessageRole.SYSTEM: SystemMessage,
    MessageRole.USER: UserMessage,
    MessageRole.ASSISTANT: AssistantMessage,
    MessageRole.CODE_EXECUTION: CodeExecutionMessage,
    MessageRole.EXECUTION_RESULT: ExecutionResultMessage,
}


def message_from_dict(data: Mapping[str, Any]) -> Message:
    """The message for a `{"role", "content"}` dict (itself when it is one already)."""
    if isinstance(data, Message):
        return data
    role = data.get("role")
    role = str(getattr(role, "value", role))
    make = _BY_ROLE.get(role)
    if make is None:
        raise ValueError(f"not a message role: {role!r}")
    return make(str(data.get("content") or ""))


def with_content(message: Mapping[str, Any], content: str) -> dict[str, Any]:
    """A copy of *message* with *content*: a message keeps its class, a plain dict stays one."""
    if isinstance(message, Message):
        changed = copy.copy(message)
        changed.content = content
        return changed
    return {**message, "content": content}


def to_wire(messages: Iterable[Mapping[str, Any]]) -> list[dict[str, str]]:
    """The provider's form of *messages*: plain `{"role", "content"}` dicts."""
    return [{"role": str(m["role"]), "content": str(m.get("content") or "")} for m in messages]


__all__ = [
    "AssistantMessage",
    "CodeExecutionMessage",
    "ExecutionResultMessage",
    "Message",
    "MessageRole",
    "SummaryAcknowledgementMessage",
    "SummaryMessage",
    "SystemMessage",
    "UserMessage",
    "message_from_dict",
    "to_wire",
    "with_content",
]
