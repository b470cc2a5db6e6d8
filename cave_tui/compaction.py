"""Upstream's `cave_agent.compaction`: `compact_if_needed` and `CompactionState`.

Cave compacts inside the agent (`CaveAgent(context_window=N)` builds a
`cave_tui.agent.compaction.Compactor`). This adapter runs that compactor once
over a message list, as upstream's function does: the first message, if it is
the system message, is kept as it is and the rest is compacted. Cave's tiers and
token counts apply (cl100k counts; trigger at 80 % of the window).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cave_tui.agent.breaker import CircuitBreaker
from cave_tui.agent.compaction import Compactor
from cave_tui.agent.conversation import Conversation
from cave_tui.models.base import Model
from cave_tui.types import message_from_dict

_TIERS = {1: "microcompact", 2: "full_compact", 3: "full_compact"}  # cave's trim is upstream's
# last resort inside its full compact


@dataclass
class CompactionState:
    """What carries over between calls: the summariser's circuit breaker."""

    consecutive_failures: int = 0
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker, repr=False)


class _Conversation:
    """The part of an agent a `Compactor` uses: `history`, `conversation`, `model`,
    `build_request()`."""

    def __init__(self, model: Model, head: list[dict[str, Any]], history: list[dict[str, Any]]):
        self.model = model
        self.conversation = Conversation.over(history)
        self._head = head

    @property
    def history(self) -> list[dict[str, Any]]:
        return self.conversation.messages

    async def build_request(self) -> list[dict[str, Any]]:
        return [*self._head, *self.history]


def _as_dict(message: Any) -> dict[str, Any]:
    if isinstance(message, dict):
        return message
    to_dict = getattr(message, "to_dict", None)
    if callable(to_dict):
        result: dict[str, Any] = to_dict()
        return result
    role = getattr(message, "role", "user")
    return {"role": str(getattr(role, "value", role)), "content": str(message.content)}


async def compact_if_needed(
    messages: list[Any],
    model: Model,
    state: CompactionState,
    context_window: int = 128_000,
) -> tuple[list[Any], str | None]:
    """`(messages, tier)`: the list compacted when over budget, else unchanged with None.

    *messages* may hold upstream's message objects (`cave_tui.types`) or cave's dicts.
    Messages the compactor left alone come back as the same objects; new ones (a
    summary, a cleared result) come back in the kind of the first message.
    """
    if not messages:
        return messages, None
    dicts = [_as_dict(m) for m in messages]
    head = 1 if dicts[0].get("role") == "system" else 0
    originals = {id(d): m for d, m in zip(dicts, messages, strict=True)}
    conversation = _Conversation(model, dicts[:head], list(dicts[head:]))
    compactor = Compactor(conversation, context_window)
    compactor.breaker = state.breaker
    tier = 0
    async for event in compactor.maybe_compact(step=0):
        tier = getattr(event, "tier", tier)
    state.consecutive_failures = state.breaker.failures
    if not tier:
        return messages, None
    as_objects = not isinstance(messages[0], dict)
    out = list(messages[:head])
    for d in conversation.history:
        original = originals.get(id(d))
        if original is not None:
            out.append(original)
        else:
            out.append(message_from_dict(d) if as_objects else d)
    return out, _TIERS.get(tier, "full_compact")


__all__ = ["CompactionState", "compact_if_needed"]
