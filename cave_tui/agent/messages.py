"""Conversation messages: normalising what callers pass, and shaping a reply's text."""

from __future__ import annotations

from typing import Any

from cave_tui.models.base import Message


def normalize_message(message: Any) -> Message:
    """A `{"role", "content"}` dict from a dict, an upstream message object or anything
    with `role` and `content`."""
    if isinstance(message, dict):
        return {"role": message["role"], "content": message.get("content") or ""}
    to_dict = getattr(message, "to_dict", None)  # upstream's message classes (cave_tui.types)
    if callable(to_dict):
        return normalize_message(to_dict())
    role = getattr(message, "role", None)
    role = getattr(role, "value", role)
    return {"role": str(role), "content": str(getattr(message, "content", ""))}


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
