"""Streaming one model reply: text in flushed pieces, retries, usage, continuations.

With `stop_after_code`, the reply ends where its first code block closes, as the
streaming parser reads it (`FirstBlockCut`; 0.8's agent stops reading there too): a ```
line inside a string or an empty fence does not end it, and the stream is closed there.

A reply cut by the output limit, or by a stream that dropped mid-reply (a transient
failure after some text, not a stall: 0.8's), is continued (up to MAX_CONTINUATIONS), as upstream
does: the cut part and OUTPUT_RECOVERY_PROMPT join the conversation and the next part
is parsed joined to it; a request over the context window is compacted and
sent again (up to MAX_OVERFLOW_RETRIES).
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.agent.conversation import Conversation
from cave_tui.agent.extraction import extract_blocks
from cave_tui.models.adapt import stream_items
from cave_tui.models.base import (
    Completion,
    ContextOverflowError,
    ErrorKind,
    Message,
    Model,
    ModelError,
    RetryNotice,
    StreamItem,
    StreamStalledError,
    TextDelta,
    Usage,
)
from cave_tui.parsing.streaming import SegmentType, StreamingTextParser

MAX_CONTINUATIONS = 3
MAX_OVERFLOW_RETRIES = 3  # reactive compactions per model call before giving up
OUTPUT_RECOVERY_PROMPT = (  # upstream's wording (0.7.3 and 0.8)
    "Output limit hit. Resume directly, pick up mid-thought. "
    "Break remaining work into smaller pieces."
)
TEXT_FLUSH_CHARS = 24
_FENCE_LINE = re.compile(r"^ {0,3}(`{3,}|~{3,})\s*$", re.MULTILINE)


@dataclass
class Reply:
    """One model reply as it streams in: its text (all its parts, joined) and the usage of
    its calls. `recorded`: how much of `text` is in the conversation already (the parts
    cut by the output limit); `truncated`: still cut after the last continuation."""

    text: str = ""
    usage: Usage = field(default_factory=Usage)
    recorded: int = 0
    truncated: bool = False

    @property
    def unrecorded(self) -> str:
        """The part of the reply not yet in the conversation (its last part)."""
        return self.text[self.recorded :]


async def stream_reply(
    model: Model,
    build_request: Callable[[], Awaitable[list[Message]]],
    reply: Reply,
    step: int,
    options: dict[str, Any],
    conversation: Conversation,
    compactor: Any = None,
    language: str = "python",
    *,
    idle_timeout: float | None = None,
    stop_after_code: bool = False,
    lead: str = "",
) -> AsyncIterator[ev.Event]:
    """Stream one reply into *reply*, yielding its events; on cancel the partial reply
    joins *conversation*. *idle_timeout*: the longest wait for each piece of the reply;
    *stop_after_code*: the reply ends where its first code block closes; *lead*: the text
    the reply begins with, sent as the start of the assistant's message for the model to
    continue (only to a model that does: `Model.continues_reply`)."""
    request = await build_request()
    overflow_retries = 0
    continuations = 0
    while True:
        begun = lead if not reply.text else ""  # a continuation goes on from its parts
        sent = [*request, {"role": "assistant", "content": begun}] if begun else request
        cut = (
            (lambda before=reply.text + begun: FirstBlockCut(language, before=before))
            if stop_after_code
            else None
        )
        pending = ""
        prose = _Prose(language)
        finish: str | None = None
        dropped: ModelError | None = None
        attempt_text = ""
        try:
            async for item in _led(
                stream_items(model, sent, idle_timeout=idle_timeout, cut=cut, **options), begun
            ):
                if isinstance(item, TextDelta):
                    attempt_text += item.text
                    pending += item.text
                    prose.feed(item.text)
                    if len(pending) >= TEXT_FLUSH_CHARS or "\n" in item.text:
                        yield ev.TextEvent(content=prose.take(), raw=pending, step=step)
                        pending = ""
                elif isinstance(item, RetryNotice):
                    if pending:
                        yield ev.TextEvent(content=prose.take(), raw=pending, step=step)
                        pending = ""
                    prose = _Prose(language)
                    if item.discard_partial:
                        attempt_text = ""
                    yield ev.RetryEvent(
                        content=f"retry {item.attempt} in {item.delay:.1f}s: {item.reason}",
                        step=step,
                        attempt=item.attempt,
                        delay=item.delay,
                    )
                elif isinstance(item, Completion):
                    finish = item.finish_reason
                    reply.usage = reply.usage + item.usage
                    if compactor is not None and continuations == 0:
                        compactor.observe_usage(item.usage, item.usage_reported, len(conversation))
                    yield ev.UsageEvent(
                        step=step,
                        prompt_tokens=item.usage.prompt_tokens,
                        completion_tokens=item.usage.completion_tokens,
                        total_tokens=item.usage.total_tokens,
                        run_prompt_tokens=reply.usage.prompt_tokens,
                        run_completion_tokens=reply.usage.completion_tokens,
                        reported=item.usage_reported,
                    )
        except ContextOverflowError:
            if compactor is None or overflow_retries >= MAX_OVERFLOW_RETRIES:
                raise
            overflow_retries += 1
            async for event in compactor.compact_now(step, reactive=True):
                yield event
            reply.usage = reply.usage + compactor.take_usage()
            request = await build_request()
            continue
        except ModelError as exc:  # 0.8's: a stream dropped mid-reply is resumed, text kept
            if not (
                exc.kind == ErrorKind.TRANSIENT
                and not isinstance(exc, StreamStalledError)  # a stalled server stalls again
                and attempt_text
                and continuations < MAX_CONTINUATIONS
            ):
                raise
            dropped = exc
        except asyncio.CancelledError:
            reply.text += attempt_text
            conversation.add_cut_reply(reply.unrecorded)
            raise
        prose.end()
        if pending or prose.text:
            yield ev.TextEvent(content=prose.take(), raw=pending, step=step)
        reply.text += attempt_text
        if (finish == "length" or dropped) and continuations < MAX_CONTINUATIONS:
            continuations += 1
            cause = "the output limit" if dropped is None else f"a dropped stream ({dropped})"
            yield ev.OutputRecoveryEvent(
                content=f"reply cut by {cause}; continuing ({continuations}/{MAX_CONTINUATIONS})",
                step=step,
                recovery=continuations,
                max_recoveries=MAX_CONTINUATIONS,
            )
            if attempt_text:
                conversation.add_reply(attempt_text)
            conversation.add_note(OUTPUT_RECOVERY_PROMPT)
            reply.recorded = len(reply.text)
            request = await build_request()
            continue
        reply.truncated = finish == "length"
        return


async def _led(items: AsyncIterator[StreamItem], lead: str) -> AsyncIterator[StreamItem]:
    """*items* with *lead* as the reply's first text, again after a retry that voids the
    text streamed (the retried call begins from the lead too). A server that sends the
    lead back before its continuation (llama.cpp does when not streaming) is not believed
    twice: the echo is dropped."""
    if not lead:
        async for item in items:
            yield item
        return
    yield TextDelta(lead)
    head: str | None = ""  # the model's first text, held until it shows whether it echoes
    async for item in items:
        if isinstance(item, TextDelta) and head is not None:
            head += item.text
            if len(head) < len(lead) and lead.startswith(head):
                continue
            rest, head = head.removeprefix(lead), None
            if rest:
                yield TextDelta(rest)
            continue
        if head:  # a reply shorter than the lead, ended (or retried) while held
            yield TextDelta(head)
        head = None
        yield item
        if isinstance(item, RetryNotice) and item.discard_partial:
            yield TextDelta(lead)
            head = ""


class FirstBlockCut:
    """Ends a reply just after the closing fence of its first code block (a `TextCut`).

    The block is the one `StreamingTextParser` completes (a ```` ```python ```` fence;
    a ``` line inside a string does not close it, an empty block is not one). A block
    the parser does not open (```` ```py ````, a bare fence holding Python) ends where
    `extract_blocks` closes it, once its fence line is whole. *before*: the reply's
    parts already read (a continuation after the output limit goes on from them).
    """

    def __init__(self, language: str = "python", before: str = "") -> None:
        self._parser = StreamingTextParser(language)
        self._language = language
        self._text = ""
        self.stopped = False
        if before:
            self.feed(before)

    def feed(self, piece: str) -> str:
        if self.stopped:
            return ""
        start = len(self._text)
        self._text += piece
        self._parser.process_chunk(piece)
        if self._parser.is_first_code_block_completed():
            self.stopped = True
            return piece[: max(0, len(piece) - len(self._parser.remainder))]
        if not self._parser.in_code_block and (end := self._other_block_end(start)):
            self.stopped = True
            return piece[: max(0, end - start)]
        return piece

    def rest(self) -> str:
        return ""

    def _other_block_end(self, start: int) -> int | None:
        """Where a block the parser does not read closes, when a fence line was just ended."""
        whole = self._text[: self._text.rfind("\n") + 1]
        scan_from = self._text.rfind("\n", 0, max(0, start - 1)) + 1
        if not _FENCE_LINE.search(whole, scan_from):
            return None
        lines = whole.splitlines(keepends=True)
        for block in extract_blocks(whole, self._language)[:1]:
            last = block.end_line - 1  # its closing fence line, when it has one
            if block.start_line < last < len(lines) and _FENCE_LINE.match(lines[last]):
                return len("".join(lines[: block.end_line]).rstrip("\n"))
        return None


class _Prose:
    """The prose of a streaming reply, its code blocks left out (they come as `code`)."""

    def __init__(self, language: str) -> None:
        self._parser = StreamingTextParser(language)
        self.text = ""

    def feed(self, chunk: str) -> None:
        self.text += "".join(
            s.content for s in self._parser.process_chunk(chunk) if s.type is SegmentType.TEXT
        )

    def end(self) -> None:
        self.text += "".join(s.content for s in self._parser.flush() if s.type is SegmentType.TEXT)

    def take(self) -> str:
        text, self.text = self.text, ""
        return text
