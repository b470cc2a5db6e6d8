"""Upstream's token estimate and compaction threshold (characters / 4; window − 29k)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

CHARS_PER_TOKEN = 4
OUTPUT_TOKENS_RESERVE = 16_000
COMPACT_BUFFER_TOKENS = 13_000


def compact_threshold(context_window: int) -> int:
    """Tokens above which compaction starts: the window less both reserves, or half the
    window when the reserves do not fit in it."""
    threshold = context_window - OUTPUT_TOKENS_RESERVE - COMPACT_BUFFER_TOKENS
    return threshold if threshold > 0 else context_window // 2


def content_of(message: Any) -> str:
    """A message's text, whether it is an upstream message object or a provider dict."""
    if isinstance(message, dict):
        return str(message.get("content") or "")
    return str(getattr(message, "content", "") or "")


def estimate_tokens(messages: Sequence[Any], api_token_count: int | None = None) -> int:
    """*api_token_count* when the provider reported one (> 0), else characters / 4."""
    if api_token_count is not None and api_token_count > 0:
        return api_token_count
    return sum(len(content_of(m)) for m in messages) // CHARS_PER_TOKEN


__all__ = [
    "CHARS_PER_TOKEN",
    "COMPACT_BUFFER_TOKENS",
    "OUTPUT_TOKENS_RESERVE",
    "compact_threshold",
    "estimate_tokens",
]
