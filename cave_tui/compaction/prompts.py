"""The summary request of upstream's full compact, and how its transcript is written.

The system prompt is cave's own summariser prompt (`cave_tui.agent.summarizer`): the
same two blocks as upstream's, an `<analysis>` scratchpad that is dropped and the
`<summary>` that is kept.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from cave_tui.agent.summarizer import SUMMARY_SYSTEM

MICROCOMPACT_PLACEHOLDER = "[Old execution result cleared to save context space]"

COMPACT_SYSTEM_PROMPT = SUMMARY_SYSTEM
COMPACT_USER_PROMPT = (
    "Summarise the conversation above, keeping what is needed to carry on the work."
)

_MAX_CONTENT_DISPLAY_CHARS = 2000
_SUMMARY = re.compile(r"<summary>(.*?)</summary>", re.DOTALL)


def format_transcript(
    messages: Sequence[Any], max_chars_per_msg: int = _MAX_CONTENT_DISPLAY_CHARS
) -> str:
    """`[role]: content` per message (each cut to *max_chars_per_msg*, marked `...`);
    empty and cleared messages are left out."""
    lines: list[str] = []
    for message in messages:
        content = message.content
        if not content or content == MICROCOMPACT_PLACEHOLDER:
            continue
        if len(content) > max_chars_per_msg:
            content = content[:max_chars_per_msg] + "..."
        role = getattr(message.role, "value", message.role)
        lines.append(f"[{role}]: {content}")
    return "\n\n".join(lines)


def extract_summary(raw_output: str) -> str:
    """The `<summary>` block of the summariser's reply, or the whole reply without one."""
    match = _SUMMARY.search(raw_output)
    return (match.group(1) if match else raw_output).strip()


__all__ = [
    "COMPACT_SYSTEM_PROMPT",
    "COMPACT_USER_PROMPT",
    "MICROCOMPACT_PLACEHOLDER",
    "extract_summary",
    "format_transcript",
]
