"""Upstream's three compaction tiers over a list of upstream message objects.

`microcompact` clears old execution results (no model call), `full_compact` has the
model summarise the older half (stopping after `MAX_CONSECUTIVE_FAILURES` failures in
a row), and `trim_fallback` keeps the newer half. Each returns its input list itself
when it has nothing to do.
"""

from __future__ import annotations

import logging
from typing import Any

from cave_tui.compaction.prompts import (
    COMPACT_SYSTEM_PROMPT,
    COMPACT_USER_PROMPT,
    MICROCOMPACT_PLACEHOLDER,
    extract_summary,
    format_transcript,
)
from cave_tui.compaction.state import CompactionState
from cave_tui.types import AssistantMessage, ExecutionResultMessage, MessageRole, UserMessage

logger = logging.getLogger(__name__)

MAX_CONSECUTIVE_FAILURES = 3
KEEP_RECENT_EXECUTION_RESULTS = 6
MIN_KEEP_MESSAGES = 4

SUMMARY_HEADER = "[Previous conversation summary]"
SUMMARY_ACK = "Understood. I have the summary of our earlier conversation and will go on from it."


def microcompact(messages: list[Any]) -> list[Any]:
    """Replace all but the newest `KEEP_RECENT_EXECUTION_RESULTS` execution results by
    `MICROCOMPACT_PLACEHOLDER`; the number of messages does not change."""
    results = [i for i, m in enumerate(messages) if m.role == MessageRole.EXECUTION_RESULT]
    if len(results) <= KEEP_RECENT_EXECUTION_RESULTS:
        return messages
    old = set(results[:-KEEP_RECENT_EXECUTION_RESULTS])
    return [
        ExecutionResultMessage(MICROCOMPACT_PLACEHOLDER) if i in old else m
        for i, m in enumerate(messages)
    ]


def _keep_count(messages: list[Any]) -> int:
    return max(len(messages) // 2, MIN_KEEP_MESSAGES)


async def full_compact(messages: list[Any], model: Any, state: CompactionState) -> list[Any]:
    """A summary of the older messages, then the newer half (at least `MIN_KEEP_MESSAGES`).

    A failed summary counts in *state* and falls back to `trim_fallback`, as does every
    call once `MAX_CONSECUTIVE_FAILURES` summaries in a row have failed.
    """
    if state.consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
        logger.warning("compaction: summaries stopped after repeated failures; trimming")
        return trim_fallback(messages)
    keep = _keep_count(messages)
    older, newer = messages[:-keep], messages[-keep:]
    if not older:
        return messages
    try:
        summary = await _summarise(older, model)
    except Exception:
        state.consecutive_failures += 1
        logger.warning(
            "compaction: summary failed (%d/%d); trimming instead",
            state.consecutive_failures,
            MAX_CONSECUTIVE_FAILURES,
            exc_info=True,
        )
        return trim_fallback(messages)
    state.consecutive_failures = 0
    return [UserMessage(f"{SUMMARY_HEADER}\n{summary}"), AssistantMessage(SUMMARY_ACK), *newer]


def trim_fallback(messages: list[Any]) -> list[Any]:
    """The newer half (at least `MIN_KEEP_MESSAGES`), without execution results at its
    head that have lost the code they answer."""
    kept = messages[-_keep_count(messages) :]
    start = 0
    while start < len(kept) and kept[start].role == MessageRole.EXECUTION_RESULT:
        start += 1
    return kept[start:]


async def _summarise(messages: list[Any], model: Any) -> str:
    request = [
        {"role": "system", "content": COMPACT_SYSTEM_PROMPT},
        {"role": "user", "content": f"{format_transcript(messages)}\n\n{COMPACT_USER_PROMPT}"},
    ]
    response = await model.call(request)
    summary = extract_summary(str(getattr(response, "content", "") or ""))
    if not summary:
        raise ValueError("the model returned an empty summary")
    return summary


__all__ = [
    "KEEP_RECENT_EXECUTION_RESULTS",
    "MAX_CONSECUTIVE_FAILURES",
    "MIN_KEEP_MESSAGES",
    "full_compact",
    "microcompact",
    "trim_fallback",
]
