"""Upstream's `cave_agent.compaction`: 0.7's functions (`compact_if_needed`,
`full_compact_needed`, `recover_from_overflow`, `CompactionState`) and 0.8's `Compactor`.

Cave compacts inside the agent (`CaveAgent(context_window=N)` builds a
`cave_tui.agent.compaction.Compactor`). These adapters run that compactor over a message
list, as upstream's do: the first message, if it is the system message, is kept as it is
and the rest is compacted. Cave's tiers and token counts apply (cl100k counts; trigger at
80 % of the window; a summary that cannot bring the list under the window is followed by
cave's trim).

0.8's `Compactor(model, context_window=...)` is a compaction policy handed to
`CaveAgent(compactor=...)`: the agent compacts with cave's compactor over that window,
summarising with that model, behind the policy's breaker (`CompactionState`), which
re-closes: after three failed summaries it skips ten attempts, then lets one through.
"""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.agent.breaker import BreakerState, CircuitBreaker
from cave_tui.agent.compaction import Compactor as AgentCompactor
from cave_tui.agent.compaction import message_tokens
from cave_tui.agent.conversation import Conversation
from cave_tui.compaction.tokens import TokenAnchor, anchored, estimate_tokens
from cave_tui.models.base import Model
from cave_tui.types import message_from_dict

DEFAULT_CONTEXT_WINDOW = 128_000
MAX_CONSECUTIVE_FAILURES = 3  # failed summaries that open the breaker (upstream's)
COOLDOWN_ATTEMPTS = 10  # attempts skipped while it is open, before one is let through

_TIERS = {1: "microcompact", 2: "full_compact", 3: "full_compact"}  # cave's trim is upstream's
# last resort inside its full compact


@dataclass
class CompactionState:
    """The summariser's health across calls: 0.8's breaker counted in attempts
    (`should_skip`, `record_success`, `record_failure`), and the time-based one 0.7's
    `compact_if_needed` calls share (`breaker`)."""

    consecutive_failures: int = 0
    cooldown_remaining: int = 0
    breaker: CircuitBreaker = field(default_factory=CircuitBreaker, repr=False)

    @property
    def is_open(self) -> bool:
        """Summaries are being skipped (reading it skips nothing)."""
        return self.cooldown_remaining > 0

    def record_success(self) -> None:
        self.consecutive_failures = 0
        self.cooldown_remaining = 0

    def record_failure(self) -> None:
        self.consecutive_failures += 1
        if self.consecutive_failures >= MAX_CONSECUTIVE_FAILURES:
            self.cooldown_remaining = COOLDOWN_ATTEMPTS

    def should_skip(self) -> bool:
        """Whether this summary attempt is skipped; each skipped attempt counts down, and
        the last one clears the failures, so the next attempt is a real trial."""
        if self.cooldown_remaining <= 0:
            return False
        self.cooldown_remaining -= 1
        if self.cooldown_remaining == 0:
            self.consecutive_failures = 0
        return True


class AttemptBreaker(CircuitBreaker):
    """cave's compactor's breaker, driven by a 0.8 `CompactionState` (counted in
    attempts, not seconds): `allow()` is one attempt."""

    def __init__(self, state: CompactionState) -> None:
        super().__init__(max_failures=MAX_CONSECUTIVE_FAILURES, cooldown=0.0)
        self.compaction_state = state

    @property
    def state(self) -> BreakerState:
        return BreakerState.OPEN if self.compaction_state.is_open else BreakerState.CLOSED

    def allow(self) -> bool:
        return not self.compaction_state.should_skip()

    def retry_in(self) -> float:
        return float(self.compaction_state.cooldown_remaining)  # attempts, not seconds

    def record_success(self) -> None:
        self.compaction_state.record_success()
        self.failures = 0

    def record_failure(self) -> None:
        self.compaction_state.record_failure()
        self.failures = self.compaction_state.consecutive_failures


class _Conversation:
    """The part of an agent a compactor uses: `history`, `conversation`, `model`,
    `build_request()`."""

    def __init__(
        self, model: Model | None, head: list[dict[str, Any]], history: list[dict[str, Any]]
    ) -> None:
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


Run = Callable[[AgentCompactor], AsyncIterator[ev.Event]]


async def _over_list(
    messages: list[Any],
    model: Model,
    context_window: int,
    breaker: CircuitBreaker,
    run: Run,
) -> tuple[list[Any], int]:
    """Run cave's compactor (*run*) over *messages*; `(messages, tier)` (tier 0: unchanged).
    Messages it left alone come back as the same objects; new ones in the kind of the first."""
    if not messages:
        return messages, 0
    dicts = [_as_dict(m) for m in messages]
    head = 1 if dicts[0].get("role") == "system" else 0
    originals = {id(d): m for d, m in zip(dicts, messages, strict=True)}
    conversation = _Conversation(model, dicts[:head], list(dicts[head:]))
    compactor = AgentCompactor(conversation, context_window)
    compactor.breaker = breaker
    tier = 0
    async for event in run(compactor):
        tier = getattr(event, "tier", tier)
    if not tier:
        return messages, 0
    as_objects = type(messages[0]) is not dict  # message objects (dicts too)
    out = list(messages[:head])
    for d in conversation.history:
        original = originals.get(id(d))
        if original is not None:
            out.append(original)
        else:
            out.append(message_from_dict(d) if as_objects else d)
    return out, tier


def _tokens(messages: list[Any]) -> int:
    return sum(message_tokens(_as_dict(m)) for m in messages)


async def compact_if_needed(
    messages: list[Any],
    model: Model,
    state: CompactionState,
    context_window: int = DEFAULT_CONTEXT_WINDOW,
) -> tuple[list[Any], str | None]:
    """`(messages, tier)`: the list compacted when over budget, else unchanged with None.

    *messages* may hold upstream's message objects (`cave_tui.types`) or cave's dicts.
    Messages the compactor left alone come back as the same objects; new ones (a
    summary, a cleared result) come back in the kind of the first message.
    """
    out, tier = await _over_list(
        messages, model, context_window, state.breaker, lambda c: c.maybe_compact(step=0)
    )
    state.consecutive_failures = state.breaker.failures
    return out, (_TIERS.get(tier, "full_compact") if tier else None)


def full_compact_needed(
    messages: list[Any],
    context_window: int = DEFAULT_CONTEXT_WINDOW,
    api_token_count: int | None = None,
) -> bool:
    """Whether compacting *messages* would need a summary: over the threshold even after
    old cell results are cleared (no model call; *api_token_count*, the provider's count
    of the same messages, replaces cave's count)."""
    dicts = [_as_dict(m) for m in messages]
    compactor = AgentCompactor(_Conversation(None, [], dicts), context_window)
    tokens = api_token_count if api_token_count is not None else _tokens(dicts)
    if tokens <= compactor.threshold:
        return False
    _, saved, _ = compactor._clear_old_results(dicts, compactor.keep_results)
    return tokens - saved > compactor.threshold


async def recover_from_overflow(
    messages: list[Any], model: Model, context_window: int = DEFAULT_CONTEXT_WINDOW
) -> list[Any]:
    """*messages* compacted as after the provider rejected them as too long (old results
    cleared, the older part summarised, trimmed if still too long); the system message
    is kept."""
    out, _ = await _over_list(
        messages, model, context_window, CircuitBreaker(), lambda c: c.compact_now(step=0)
    )
    return out


class Compactor:
    """Upstream 0.8's compaction policy for `CaveAgent(compactor=...)`: the summarising
    *model*, the *context_window*, and the breaker's `state` (re-closing); usable on its
    own too (`microcompact`, `summarize`, `recover_from_overflow` on a message list)."""

    def __init__(
        self,
        model: Model,
        *,
        context_window: int = DEFAULT_CONTEXT_WINDOW,
        output_reserve: int | None = None,
        token_estimator: Callable[[str], int] | None = None,
    ) -> None:
        self.model = model
        self.context_window = context_window
        self.output_reserve = output_reserve  # kept; cave triggers at 80 % of the window
        self.token_estimator = token_estimator
        self.state = CompactionState()
        self.breaker = AttemptBreaker(self.state)
        self._adopted_reserve: int | None = None

    def adopt_output_reserve(self, tokens: int | None) -> None:
        """Record the generating model's output cap (the largest one given is kept)."""
        if tokens is not None and (self._adopted_reserve is None or tokens > self._adopted_reserve):
            self._adopted_reserve = tokens

    def threshold(self) -> int:
        """Tokens above which compaction starts (cave's: 80 % of the window)."""
        return AgentCompactor(_Conversation(self.model, [], []), self.context_window).threshold

    def estimate_tokens(self, messages: list[Any], *, anchor: TokenAnchor | None = None) -> int:
        """The tokens of *messages*: *token_estimator* over their text when given, else
        cave's counts; with an *anchor*, the provider's count then plus the growth since
        (counted afresh when the list shrank below the anchored one)."""
        if self.token_estimator is None:
            return anchored(_tokens(messages), anchor)
        return estimate_tokens(messages, anchor, self.token_estimator)

    def anchor(self, messages: list[Any], api_tokens: int) -> TokenAnchor:
        """The provider's count of *messages* paired with this compactor's."""
        return TokenAnchor(api_tokens, self.estimate_tokens(messages))

    def microcompact(
        self, messages: list[Any], *, anchor: TokenAnchor | None = None
    ) -> tuple[list[Any], bool]:
        """`(messages, needs_summarize)`: old cell results cleared when over the threshold
        (no model call), and whether a summary is still needed."""
        threshold = self.threshold()
        tokens = self.estimate_tokens(messages, anchor=anchor)
        if tokens <= threshold:
            return messages, False
        dicts = [_as_dict(m) for m in messages]
        head = 1 if dicts and dicts[0].get("role") == "system" else 0
        compactor = AgentCompactor(_Conversation(self.model, [], []), self.context_window)
        body, saved, cleared = compactor._clear_old_results(dicts[head:], compactor.keep_results)
        if not cleared:
            return messages, True
        as_objects = bool(messages) and type(messages[0]) is not dict
        out = list(messages[:head]) + [
            original if d is original_dict else (message_from_dict(d) if as_objects else d)
            for d, original, original_dict in zip(body, messages[head:], dicts[head:], strict=True)
        ]
        return out, tokens - saved > threshold

    async def summarize(self, messages: list[Any]) -> list[Any]:
        """The older part of *messages* replaced by the model's summary, behind the breaker
        (`state`): while it is open, or when the summary fails, old results are cleared
        and the rest trimmed to fit, as cave's compactor does."""
        out, _ = await _over_list(
            messages,
            self.model,
            self.context_window,
            self.breaker,
            lambda c: c.compact_now(step=0, reactive=False, requested=True),
        )
        return out

    async def recover_from_overflow(self, messages: list[Any]) -> list[Any]:
        """*messages* compacted as after the provider rejected them as too long."""
        return await recover_from_overflow(messages, self.model, self.context_window)


__all__ = [
    "CompactionState",
    "Compactor",
    "TokenAnchor",
    "compact_if_needed",
    "estimate_tokens",
    "full_compact_needed",
    "recover_from_overflow",
]
