"""Conversation messages: normalising what callers pass, and shaping a reply's text."""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from cave_tui.agent.extraction import extract_code
from cave_tui.messages import (
    AssistantMessage,
    CodeExecutionMessage,
    ExecutionResultMessage,
    UserMessage,
    message_from_dict,
)
from cave_tui.messages import Message as ConversationMessage
from cave_tui.models.base import Message


def as_message(message: object) -> ConversationMessage:
    """The message object for a dict, a message (itself) or anything with `role` and
    `content`; a role that is not a message role is a `ValueError`."""
    if isinstance(message, ConversationMessage):
        return message
    if isinstance(message, Mapping):
        return message_from_dict(message)
    role = getattr(message, "role", None)
    content = getattr(message, "content", "")
    return message_from_dict({"role": getattr(role, "value", role), "content": str(content)})


def typed_history(
    messages: Iterable[object], identifier: str = "python"
) -> list[ConversationMessage]:
    """*messages* as message objects: message objects kept (the same objects), others
    converted. A converted assistant reply holding code is a `CodeExecutionMessage`, and
    a converted user message right after one its `ExecutionResultMessage`, as the agent
    recorded them (a session log keeps only the wire roles)."""
    out: list[ConversationMessage] = []
    for message in messages:
        typed = as_message(message)
        if typed is not message:
            if type(typed) is AssistantMessage:
                if extract_code(typed.content, identifier) is not None:
                    typed = CodeExecutionMessage(typed.content)
            elif type(typed) is UserMessage and out and type(out[-1]) is CodeExecutionMessage:
                typed = ExecutionResultMessage(typed.content)
        out.append(typed)
    return out


def merge_consecutive(messages: list[Message]) -> list[Message]:
    """Join same-role neighbours (left by an aborted turn) so every provider accepts them."""
    out: list[Message] = []
    for message in messages:
        if out and out[-1]["role"] == message["role"] and message["role"] != "system":
            out[-1] = {**out[-1], "content": out[-1]["content"] + "\n\n" + message["content"]}
        else:
            out.append(dict(message))
    return out


def close_open_fence(text: str) -> str:
    """*text* with its last code fence closed, when a stop sequence cut the closing one."""
    lines = text.rstrip().splitlines()
    fences = [i for i, line in enumerate(lines) if line.lstrip().startswith("```")]
    # Odd, and the last fence opens a block (code follows it): the stop cut its close.
    if len(fences) % 2 and fences[-1] < len(lines) - 1:
        return text.rstrip("\n") + "\n```"
    return text


def last_user_text(history: list[Message]) -> str:
    """The newest user message's text: the request, for callers that fill history by hand."""
    for message in reversed(history):
        if message.get("role") == "user" and isinstance(message.get("content"), str):
            return message["content"]
    return ""
