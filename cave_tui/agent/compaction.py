"""Context compaction: keep a long conversation inside the model's context window.

`CaveAgent(context_window=N)` builds a `Compactor`; the agent calls
`maybe_compact(step)` before every model call and `compact_now(step,
reactive=True)` when the provider rejects a prompt as too long (then it retries
the call). Three tiers, cheapest first:

1. clear old execution results (keep the last few; skill instructions stay);
2. summarise older messages with the model (`<analysis>` discarded, `<summary>`
   kept), guarded by a circuit breaker that half-opens after a cool-down;
3. trim: drop the oldest messages, then cut oversized ones, as a last resort.

Only the agent's conversation changes (`Conversation.compacted`): the system prompt
is rebuilt by the agent on every call and the runtime is never touched, so the
namespace description appended to the next request still tells the model what is live.

Token counts: the provider's reported prompt tokens for the last request, plus a
cl100k count of the messages added since (`models.tokens`); a full cl100k count
of the request when nothing was reported. Summariser calls are counted in the
run's usage (`take_usage()`) and announced as `usage` events.
Over 400 lines (barely): the three tiers share the token accounting above.
"""

from __future__ import annotations

import functools
import re
import time
from collections.abc import AsyncIterator, Callable
from typing import Any, Protocol

from cave_tui.agent import events as ev
from cave_tui.agent.breaker import BreakerState, CircuitBreaker
from cave_tui.agent.extraction import extract_code
from cave_tui.agent.observation import cut_middle
from cave_tui.agent.persisted_output import persisted_pointer
from cave_tui.agent.summarizer import (
    SUMMARY_ACK,
    SUMMARY_MESSAGE,
    SUMMARY_SYSTEM,
    Entry,
    Summarizer,
    SummaryFailedError,
)
from cave_tui.messages import (
    SummaryAcknowledgementMessage,
    SummaryMessage,
    UserMessage,
    with_content,
)
from cave_tui.models.base import ContextOverflowError, Message, Model, ModelError, Usage
from cave_tui.models.tokens import at_most_tokens, count_messages, count_text

CLEARED = "[Output of this cell was cleared to save context. Inspect the variables if needed.]"
TRIMMED = (
    "[{n} earlier messages were removed to fit the context window. The Python session "
    "was not touched: every object listed under Namespace is still live.]"
)
SKILL_BLOCK = "\n\n=== Skill '"  # skill instructions inside an observation survive tier 1
_TRIMMED_RE = re.compile(r"\[(\d+) earlier messages were removed to fit the context window\.")
MIN_WINDOW = 512


@functools.cache
def system_tokens() -> int:
    """The summary request's fixed part, in tokens: counted at the first summary, not at
    import (the tokenizer's table takes a third of a second to load)."""
    return count_text(SUMMARY_SYSTEM) + 60


def message_tokens(message: Message) -> int:
    """cl100k tokens of one message, framing included (as in `count_messages`)."""
    return 3 + count_text(str(message.get("content") or "")) + count_text(str(message["role"]))


class CompactionPolicy(Protocol):
    """What `CaveAgent(compactor=...)` takes (upstream 0.8's `Compactor`,
    `cave_tui.compaction`): the window, the summarising model, the breaker."""

    model: Model
    context_window: int
    breaker: CircuitBreaker


class Compactor:
    """Owns compaction (and its breaker and token anchor) for one agent."""

    def __init__(
        self,
        agent: Any,
        context_window: int,
        *,
        trigger_ratio: float = 0.8,
        target_ratio: float = 0.6,
        keep_results: int = 4,
        tail_ratio: float = 0.6,
        min_keep_messages: int = 4,
        max_failures: int = 3,
        cooldown: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
        summary_model: Model | None = None,
    ) -> None:
        if context_window < MIN_WINDOW:
            raise ValueError(f"context_window must be at least {MIN_WINDOW} tokens")
        if not 0 < target_ratio <= trigger_ratio <= 1:
            raise ValueError("need 0 < target_ratio <= trigger_ratio <= 1")
        self.agent = agent
        self.context_window = context_window
        self.effective_window = context_window  # lowered when the provider says "too long"
        self.window_source: str | None = None  # the server (or model) whose context size set it
        self._asked_server = False
        self.trigger_ratio = trigger_ratio
        self.target_ratio = target_ratio
        self.keep_results = keep_results
        self.tail_ratio = tail_ratio  # share of the target kept verbatim by a summary
        self.min_keep_messages = min_keep_messages
        self.breaker = CircuitBreaker(max_failures, cooldown, clock)
        self.summary_model = summary_model
        self.compactions = 0
        self._anchor: tuple[int, int] | None = None  # (prompt tokens, history length covered)
        self._usage = Usage()
        self._usage_events: list[ev.UsageEvent] = []
        self._summary_text: str | None = None  # content of the summary message we wrote
        self._prior_summary: str | None = None  # its summary part (for incremental updates)
        self._futile_at: int | None = None  # history length when nothing was left to do

    # -- budget -----------------------------------------------------------------
    @property
    def threshold(self) -> int:
        return int(self.effective_window * self.trigger_ratio)

    @property
    def target(self) -> int:
        return int(self.effective_window * self.target_ratio)

    def observe_usage(self, usage: Usage, reported: bool, history_len: int) -> None:
        """Remember the provider's prompt size for a request built from history[:history_len]."""
        if reported and usage.prompt_tokens > 0:
            self._anchor = (usage.prompt_tokens, history_len)

    async def current_tokens(self, under: int | None = None) -> int:
        """Tokens the next request will take (anchored to the provider's count when known).
        With *under*: a bound of them that is at most *under* when one is found without the
        tokenizer (the caller only compares it), else the count."""
        history = self.agent.history
        if self._anchor is not None:
            tokens, covered = self._anchor
            if covered <= len(history):
                return tokens + sum(message_tokens(m) for m in history[covered:])
            self._anchor = None
        request = await self.agent.build_request()
        if under is not None:
            bound = at_most_tokens(request)
            if bound <= under:
                return bound
        return count_messages(request)

    def take_usage(self) -> Usage:
        """Usage of summariser calls since the last take (the agent adds it to the run)."""
        usage, self._usage = self._usage, Usage()
        return usage

    def _on_usage(self, usage: Usage, reported: bool) -> None:
        self._usage = self._usage + usage
        self._usage_events.append(
            ev.UsageEvent(
                content="compaction",
                prompt_tokens=usage.prompt_tokens,
                completion_tokens=usage.completion_tokens,
                total_tokens=usage.total_tokens,
                run_prompt_tokens=self._usage.prompt_tokens,
                run_completion_tokens=self._usage.completion_tokens,
                reported=reported,
            )
        )

    # -- entry points (called by CaveAgent) ----------------------------------------
    async def maybe_compact(self, step: int) -> AsyncIterator[ev.Event]:
        """Compact when the next request would pass the trigger threshold."""
        if not self._asked_server:
            await self._learn_served_window()
        tokens = await self.current_tokens(under=self.threshold)
        if tokens <= self.threshold or self._futile_at == len(self.agent.history):
            return  # under budget, or nothing changed since a compaction found nothing to do
        async for event in self._compact(step, tokens, reactive=False):
            yield event

    async def _learn_served_window(self) -> None:
        """Lower the window to the one a local server runs the model with (asked once)."""
        self._asked_server = True
        model = self.agent.model
        served = getattr(model, "context_size", None)  # a model that runs its own server
        source = getattr(model, "label", None)
        if not isinstance(served, int):
            served, source = None, getattr(model, "api_base", None)
            model_id = getattr(model, "model_id", None)
            if isinstance(source, str) and isinstance(model_id, str):
                from cave_tui.models.discovery import served_context_window

                served = await served_context_window(model_id, source)
        if served is not None and MIN_WINDOW <= served < self.effective_window:
            self.effective_window = served
            self.window_source = source

    async def compact_now(
        self, step: int, reactive: bool = True, *, requested: bool = False
    ) -> AsyncIterator[ev.Event]:
        """Compact now; *reactive* means the provider already rejected the prompt.

        *requested* (the user's `/compact`): compact as hard as after a rejection, but no
        prompt was rejected, so the window is not lowered.
        """
        tokens = await self.current_tokens()
        if reactive and not requested and tokens < self.effective_window:
            # The real limit is below what we were told (or our count is low): learn it.
            self.effective_window = max(MIN_WINDOW, int(tokens * 0.9))
        why = "asked for" if requested else None
        async for event in self._compact(step, tokens, reactive=reactive or requested, why=why):
            yield event

    # -- the tiers ---------------------------------------------------------------------
    async def _compact(
        self, step: int, before: int, reactive: bool, why: str | None = None
    ) -> AsyncIterator[ev.Event]:
        if why is None:
            why = "the provider rejected the prompt as too long" if reactive else "over threshold"
        yield ev.CompactingEvent(
            step=step,
            tokens_before=before,
            content=f"compacting context: ~{before:,} tokens ({why}; limit "
            f"{self.threshold:,} of {self.effective_window:,})",
        )
        history: list[Message] = list(self.agent.history)
        tokens = before
        tier = 0
        notes: list[str] = []

        keep = max(1, self.keep_results // 2) if reactive else self.keep_results
        history, saved, cleared = self._clear_old_results(history, keep)
        if cleared:
            tier, tokens = 1, tokens - saved
            notes.append(f"cleared {cleared} old outputs")

        if reactive or tokens > self.threshold:
            outcome = await self._summarise(history, reactive)
            for event in self._usage_events:
                event.step = step
                yield event
            self._usage_events.clear()
            if isinstance(outcome, str):
                if outcome:
                    yield ev.NoticeEvent(step=step, content=outcome)
            else:
                history, delta, summarised = outcome
                tier, tokens = 2, tokens + delta
                notes.append(f"summarised {summarised} messages")

        goal = self.target if reactive else self.threshold
        if tokens > goal:
            history, tokens, trimmed = self._trim(history, tokens, self.target)
            if trimmed:
                tier = 3
                notes.append(trimmed)

        self.agent.conversation.compacted(history)
        self._anchor = (tokens, len(history))  # same units as *before*, until the next report
        self._futile_at = len(history) if tier == 0 else None
        self.compactions += 1
        done = "; ".join(notes) or "nothing left to compact"
        yield ev.CompactedEvent(
            step=step,
            tokens_before=before,
            tokens_after=tokens,
            tier=tier,
            content=f"context compacted: ~{before:,} → ~{tokens:,} tokens (tier {tier}: {done})",
        )

    def _observation_indices(self, history: list[Message]) -> list[int]:
        """User messages that are cell results: they follow an assistant reply with code."""
        ident = getattr(self.agent, "python_block_identifier", "python")
        out = []
        for i in range(1, len(history)):
            if (
                history[i]["role"] == "user"
                and history[i - 1]["role"] == "assistant"
                and extract_code(str(history[i - 1]["content"]), ident) is not None
            ):
                out.append(i)
        return out

    def _clear_old_results(
        self, history: list[Message], keep: int
    ) -> tuple[list[Message], int, int]:
        """Tier 1: replace all but the last *keep* cell results by a short marker."""
        indices = self._observation_indices(history)
        old = indices[: max(0, len(indices) - keep)]
        saved = 0
        cleared = 0
        out = list(history)
        for i in old:
            content = str(out[i]["content"])
            if content.startswith(CLEARED):
                continue
            at = content.find(SKILL_BLOCK)
            pointer = persisted_pointer(content)  # the value holding a long output stays named
            new = CLEARED + (f"\n{pointer}" if pointer else "") + (content[at:] if at >= 0 else "")
            if len(new) >= len(content):
                continue
            replacement = with_content(out[i], new)
            saved += message_tokens(out[i]) - message_tokens(replacement)
            out[i] = replacement
            cleared += 1
        return out, saved, cleared

    def _split_point(self, history: list[Message], reactive: bool) -> int:
        """Index where the kept tail starts: the newest messages that fit the tail budget.

        Never on an orphaned cell result, and an answer keeps its question.
        """
        budget = int(self.target * (self.tail_ratio / 2 if reactive else self.tail_ratio))
        floor = 2 if reactive else self.min_keep_messages
        used = 0
        split = len(history)
        while split > 0:
            tokens = message_tokens(history[split - 1])
            if len(history) - split >= floor and used + tokens > budget:
                break
            used += tokens
            split -= 1
        observations = set(self._observation_indices(history))
        while split > 0 and split in observations:
            split -= 1
        # An answer stays with the question it answers.
        if (
            split > 0
            and history[split]["role"] == "assistant"
            and history[split - 1]["role"] == "user"
            and split - 1 not in observations
        ):
            split -= 1
        return split

    def _entries(self, messages: list[Message], offset: int, history: list[Message]) -> list[Entry]:
        observations = set(self._observation_indices(history))
        entries = []
        for i, message in enumerate(messages, start=offset):
            content = str(message.get("content") or "")
            if not content.strip() or content == SUMMARY_ACK:
                continue
            label = "cell output" if i in observations else str(message["role"])
            entries.append(Entry(label, content))
        return entries

    async def _summarise(
        self, history: list[Message], reactive: bool
    ) -> tuple[list[Message], int, int] | str:
        """Tier 2. Returns (history, token delta, messages summarised), or a note why not."""
        if not self.breaker.allow():
            wait = self.breaker.retry_in()
            return (
                f"summaries paused after {self.breaker.failures} failures "
                f"(next try in {wait:.0f}s); trimming instead"
            )
        split = self._split_point(history, reactive)
        head, tail = history[:split], history[split:]
        prior = None
        start = 0
        if head and head[0]["content"] == self._summary_text and self._summary_text:
            prior = self._prior_summary
            start = 1
        entries = self._entries(head[start:], start, history)
        if not entries:
            return ""  # nothing new to summarise: not a failure
        model = self.summary_model or self.agent.model
        summarizer = Summarizer(model, self._on_usage)
        half_open = self.breaker.state is BreakerState.HALF_OPEN
        # The summary request must fit: its prompt, the transcript, and room for the reply.
        reply_room = min(4000, self.effective_window // 4)
        budget = max(256, self.effective_window - system_tokens() - reply_room - 100)
        summary: str | None = None
        error = ""
        for _ in range(3):
            try:
                summary = await summarizer.summarise(entries, prior, budget)
                break
            except ContextOverflowError:
                budget //= 2  # the summary request itself was too long: smaller chunks
                error = "the summary request was too long"
            except (ModelError, SummaryFailedError) as exc:
                error = str(exc)
                break
        if summary is None:
            self.breaker.record_failure()
            state = "paused" if self.breaker.state is BreakerState.OPEN else "will retry"
            trial = " (half-open trial)" if half_open else ""
            return (
                f"summary failed{trial} ({self.breaker.failures}/{self.breaker.max_failures}, "
                f"{state}): {error}"
            )
        self.breaker.record_success()
        summary = self._with_latest_request(summary, head, history)
        text = SUMMARY_MESSAGE.format(summary=summary)
        self._summary_text = text
        self._prior_summary = summary
        new_head: list[Message] = [SummaryMessage(text, body=summary)]
        if not tail or tail[0]["role"] == "user":
            new_head.append(SummaryAcknowledgementMessage(SUMMARY_ACK))
        delta = sum(message_tokens(m) for m in new_head) - sum(message_tokens(m) for m in head)
        return [*new_head, *tail], delta, len(head)

    def _with_latest_request(
        self, summary: str, head: list[Message], history: list[Message]
    ) -> str:
        """Keep the newest user request verbatim when it falls in the summarised part."""
        observations = set(self._observation_indices(history))
        tasks = [
            i
            for i, m in enumerate(history)
            if m["role"] == "user"
            and i not in observations
            and m["content"] != self._summary_text
            and not str(m["content"]).startswith("[")
        ]
        if not tasks or tasks[-1] >= len(head):
            return summary
        request = cut_middle(str(history[tasks[-1]]["content"]).strip(), 2000)
        if request in summary:
            return summary
        return f"{summary}\n\nThe user's latest request (verbatim):\n{request}"

    def _trim(
        self, history: list[Message], tokens: int, goal: int
    ) -> tuple[list[Message], int, str]:
        """Tier 3: drop the oldest messages, then cut the largest, until under *goal*."""
        before = tokens
        out = list(history)
        earlier = 0
        if out and (match := _TRIMMED_RE.match(str(out[0]["content"]))):
            earlier = int(match.group(1))  # an earlier trim note: fold it into the new one
            tokens -= message_tokens(out[0])
            del out[0]
        first = 0
        if out and self._summary_text and out[0]["content"] == self._summary_text:
            first = 2 if len(out) > 1 and out[1]["content"] == SUMMARY_ACK else 1
        dropped = 0
        # Older raw messages first, then the summary itself; the newest message stays.
        for start in (first, 0):
            while tokens > goal and len(out) - start > 1 and start < len(out) - 1:
                tokens -= message_tokens(out[start])
                del out[start]
                dropped += 1
        cut = 0
        while tokens > goal:
            biggest = max(range(len(out)), key=lambda i: len(str(out[i]["content"])), default=None)
            if biggest is None:
                break
            content = str(out[biggest]["content"])
            if len(content) <= 400:
                break
            smaller = with_content(out[biggest], cut_middle(content, len(content) // 2))
            tokens -= message_tokens(out[biggest]) - message_tokens(smaller)
            out[biggest] = smaller
            cut += 1
        parts = []
        if dropped or earlier:
            note: Message = UserMessage(TRIMMED.format(n=dropped + earlier))
            out.insert(0, note)
            tokens += message_tokens(note)
        if dropped:
            parts.append(f"dropped {dropped} oldest messages")
        if cut:
            parts.append(f"shortened {cut} long messages")
        if tokens >= before:  # nothing gained (e.g. only tiny messages to drop)
            return history, before, ""
        return out, tokens, ", ".join(parts)
