"""Upstream 0.8's `cave_agent.compaction.tokens` over cave's token counts: `estimate_tokens`
of a message list, `default_token_estimate` of a text, and `TokenAnchor`, a provider's
count of a list paired with cave's count of the same list.

cave counts with cl100k (`models/tokens.py`), where 0.8 charges a rate per character; an
anchored estimate is the provider's count plus the growth since, and a list that shrank
below the anchored one (compaction rewrote it) is counted afresh, as in 0.8.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass

from cave_tui.agent.compaction import message_tokens
from cave_tui.models.tokens import count_text


@dataclass(frozen=True)
class TokenAnchor:
    """A provider's prompt-token count paired with cave's count of the same messages."""

    api_tokens: int
    estimated: int


def default_token_estimate(text: str) -> int:
    """cave's token count of *text* (cl100k, or a quarter of its length without the
    tokenizer)."""
    return count_text(text) if text else 0


def as_wire(message: object) -> dict[str, object]:
    """*message* as `{"role", "content"}` (cave's dicts and 0.8's message objects)."""
    if isinstance(message, dict):
        return message
    role = getattr(message, "wire_role", None) or getattr(message, "role", "user")
    return {"role": str(getattr(role, "value", role)), "content": getattr(message, "content", "")}


def estimate_tokens(
    messages: Iterable[object],
    anchor: TokenAnchor | None = None,
    token_estimator: Callable[[str], int] | None = None,
) -> int:
    """The tokens of *messages*: *token_estimator* over their text when given, else cave's
    counts (framing included). With an *anchor*, the provider's count plus the growth since;
    when the list is smaller than the anchored one, its own count."""
    wire = [as_wire(m) for m in messages]
    if token_estimator is not None:
        tokens = sum(token_estimator(str(m.get("content") or "")) for m in wire)
    else:
        tokens = sum(message_tokens(m) for m in wire)
    return anchored(tokens, anchor)


def anchored(tokens: int, anchor: TokenAnchor | None) -> int:
    """*tokens* (cave's count of a list) read against *anchor*: the provider's count plus
    the growth since; the count itself when there is no anchor, the anchor counted
    nothing, or the list shrank below what was anchored."""
    if anchor is None or anchor.api_tokens <= 0 or tokens < anchor.estimated:
        return tokens
    return anchor.api_tokens + (tokens - anchor.estimated)


__all__ = ["TokenAnchor", "anchored", "as_wire", "default_token_estimate", "estimate_tokens"]
