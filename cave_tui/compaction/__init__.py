"""Upstream's `cave_agent.compaction`: `compact_if_needed` and its tiers, as upstream runs them.

This is for code that compacts a message list itself. `CaveAgent(context_window=N)`
does not use it: the agent compacts with `cave_tui.agent.compaction.Compactor`
(cl100k counts, trigger at 80 % of the window, chunked summaries, a breaker with a
cool-down). Here the rules are upstream's, so such code behaves as it did:

- over `compact_threshold(context_window)` tokens (characters / 4), the first message
  is kept and the rest is compacted;
- tier 1, `microcompact`, clears old execution results; if that is enough, done;
- tier 2, `full_compact`, has the model summarise the older half, falling back to
  `trim_fallback` when the summary fails.

Messages may be upstream's objects (`cave_tui.types`) or cave's provider dicts (what
`agent.messages` returns); messages left alone come back as the same objects, new ones
in the kind of the input.
"""

from __future__ import annotations

import logging
from typing import Any

from cave_tui.compaction.state import CompactionState
from cave_tui.compaction.strategies import full_compact, microcompact
from cave_tui.compaction.tokens import compact_threshold, estimate_tokens
from cave_tui.types import (
    AssistantMessage,
    CodeExecutionMessage,
    ExecutionResultMessage,
    Message,
    message_from_dict,
)

logger = logging.getLogger(__name__)


async def compact_if_needed(
    messages: list[Any],
    model: Any,
    state: CompactionState,
    context_window: int = 128_000,
) -> tuple[list[Any], str | None]:
    """`(messages, tier)`: *messages* itself and None when under the threshold, else the
    compacted list and `"microcompact"` or `"full_compact"`."""
    threshold = compact_threshold(context_window)
    if not messages or estimate_tokens(messages) <= threshold:
        return messages, None
    as_dicts = isinstance(messages[0], dict)
    objects = _as_messages(messages) if as_dicts else list(messages)
    head, body = objects[:1], objects[1:]

    body = microcompact(body)
    compacted = [*head, *body]
    if estimate_tokens(compacted) <= threshold:
        logger.info("compaction: clearing old results was enough")
        return _like_input(compacted, messages, objects, as_dicts), "microcompact"

    body = await full_compact(body, model, state)
    return _like_input([*head, *body], messages, objects, as_dicts), "full_compact"


def _as_messages(dicts: list[dict[str, Any]]) -> list[Message]:
    """Upstream's messages for cave's dicts: a reply with code and the result after it
    become `CodeExecutionMessage` and `ExecutionResultMessage`."""
    from cave_tui.agent.extraction import extract_blocks

    out: list[Message] = []
    for d in dicts:
        message = message_from_dict(d)
        if isinstance(message, AssistantMessage) and extract_blocks(message.content):
            message = CodeExecutionMessage(message.content)
        elif d.get("role") == "user" and out and isinstance(out[-1], CodeExecutionMessage):
            message = ExecutionResultMessage(message.content)
        out.append(message)
    return out


def _like_input(
    result: list[Any], originals: list[Any], objects: list[Any], as_dicts: bool
) -> list[Any]:
    if not as_dicts:
        return result
    by_id = {id(o): d for o, d in zip(objects, originals, strict=True)}
    return [by_id.get(id(m)) or m.to_dict() for m in result]


__all__ = ["CompactionState", "compact_if_needed"]
