"""Read any model's reply as cave's stream items, whichever interface it was written to.

cave's models stream `TextDelta`/`RetryNotice`/`Completion` and take options
(`stop`, `temperature`) as keyword arguments. A model written to upstream
CaveAgent's interface has `stream(self, messages)` returning a `StreamResponse`
of plain strings, with `usage` and `finish_reason` set once it is exhausted.
The agent reads every model through `stream_items`, so both kinds plug in
unchanged, and cave's own models keep their richer stream.
"""

from __future__ import annotations

import asyncio
import inspect
from collections.abc import AsyncIterable, AsyncIterator, Callable
from typing import Any, Protocol, TypeVar

from cave_tui.models.base import (
    Completion,
    Message,
    ModelError,
    RetryNotice,
    StreamItem,
    StreamStalledError,
    TextDelta,
    Usage,
    close_quietly,
)
from cave_tui.models.failures import classify
from cave_tui.models.stream_response import StreamResponse
from cave_tui.models.tokens import count_messages, count_text

T = TypeVar("T")


def takes_any_option(method: Callable[..., Any]) -> bool:
    """Whether *method* takes `**kwargs` (cave's interface does; upstream's does not)."""
    try:
        params = inspect.signature(method).parameters.values()
    except (TypeError, ValueError):
        return True
    return any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params)


def accepted_options(method: Callable[..., Any], options: dict[str, Any]) -> dict[str, Any]:
    """The *options* that *method*'s signature takes (all of them if it takes `**kwargs`)."""
    if takes_any_option(method):
        return dict(options)
    params = inspect.signature(method).parameters
    return {k: v for k, v in options.items() if k in params}


class TextCut(Protocol):
    """Where a streamed reply ends, decided while it is read: `feed` returns the part of
    each piece to keep (none past the end); `rest`, what was held back at the stream's end."""

    stopped: bool

    def feed(self, piece: str) -> str: ...

    def rest(self) -> str: ...


class StopCutter:
    """Applies stop sequences client-side, for a model that cannot take them.

    Text is held back by one character less than the longest stop sequence, so a
    sequence split across pieces is still found; nothing from it on is emitted.
    """

    def __init__(self, stops: list[str]) -> None:
        self.stops = [s for s in stops if s]
        self.hold = max((len(s) for s in self.stops), default=1) - 1
        self.text = ""
        self.sent = 0
        self.stopped = False

    def feed(self, piece: str) -> str:
        """Add *piece*; return the text now safe to emit (none past a stop sequence)."""
        start = max(0, self.sent - self.hold)
        self.text += piece
        hits = [i for i in (self.text.find(s, start) for s in self.stops) if i >= 0]
        if hits:
            self.stopped = True
            end = min(hits)
        else:
            end = len(self.text) - self.hold
        out = self.text[self.sent : end] if end > self.sent else ""
        self.sent = max(self.sent, end)
        return out

    def rest(self) -> str:
        """The text held back at the end of the stream (none once stopped)."""
        out = "" if self.stopped else self.text[self.sent :]
        self.sent = len(self.text)
        return out


def closable(source: object) -> bool:
    """Whether a stream may be closed before its end: not a `StreamResponse` written to
    upstream 0.7's interface (its own `__anext__`), read to the end for the usage it
    reports last; 0.8's (over `_open_stream`) is closed, as 0.8's agent closes it."""
    if isinstance(source, StreamResponse):
        return type(source)._open_stream is not StreamResponse._open_stream
    return hasattr(source, "aclose")


def _usage_of(raw: Any) -> Usage | None:
    prompt = int(getattr(raw, "prompt_tokens", 0) or 0)
    done = int(getattr(raw, "completion_tokens", 0) or 0)
    if not (prompt or done):
        return None
    total = int(getattr(raw, "total_tokens", 0) or prompt + done)
    return Usage(prompt, done, total, model_calls=1)


async def stream_with_idle_timeout(
    source: AsyncIterable[T], idle_timeout: float | None
) -> AsyncIterator[T]:
    """The items of *source*, each arriving within *idle_timeout* seconds (None: no limit),
    else `StreamStalledError`, a `TimeoutError` (upstream 0.8's, for any model's stream)."""
    iterator = aiter(source)
    first = True
    while True:
        try:
            if idle_timeout is None:
                item = await anext(iterator)
            else:
                item = await asyncio.wait_for(anext(iterator), idle_timeout)
        except StopAsyncIteration:
            return
        except TimeoutError:
            where = "before its first token" if first else "mid-reply"
            limit = idle_timeout or 0.0
            raise StreamStalledError(
                f"the model sent nothing for {limit:g} s {where} (stream_idle_timeout)",
                waited=limit,
                first=first,
            ) from None
        first = False
        yield item


async def stream_items(
    model: Any,
    messages: list[Message],
    *,
    idle_timeout: float | None = None,
    cut: Callable[[], TextCut] | None = None,
    **options: Any,
) -> AsyncIterator[StreamItem]:
    """*model*'s reply as cave's items: text deltas and retries, then one `Completion`.

    Options go only to a `stream` whose signature takes them; a `stop` it does not
    take is applied here: the text ends where a server would have stopped it, and
    the stream is closed at the next text it sends (a stream that ends there still
    gives its usage), or read to its end (unshown) for the usage it reports when it
    cannot be closed (an upstream `StreamResponse`).
    Plain strings become `TextDelta`s; a stream that ends without a `Completion`
    gets one from its `usage` and `finish_reason` (upstream's `StreamResponse`),
    counted locally when it reported none. A model written to upstream's interface
    raises its provider's own exceptions: they become `ModelError`s, as cave's do.
    With *idle_timeout*, an item that takes longer is a `StreamStalledError`. A stream
    that can be closed is closed however the reading ends (its end, the cut, an error).
    *cut* makes the `TextCut` that ends the reply (a new one for each attempt), in
    place of `stop`.
    """
    method = model.stream
    upstream = not takes_any_option(method)
    kwargs = accepted_options(method, options)
    stops = [] if "stop" in kwargs else list(options.get("stop") or [])
    if cut is None and stops:
        cut = lambda: StopCutter(stops)  # noqa: E731
    cutter = cut() if cut is not None else None
    completion: Completion | None = None
    parts: list[str] = []
    source: Any = None
    failure: ModelError | None = None
    try:
        source = method(messages, **kwargs)
        if inspect.isawaitable(source):
            source = await source
        items = source if idle_timeout is None else stream_with_idle_timeout(source, idle_timeout)
        async for item in items:
            if isinstance(item, Completion):
                completion = item
                continue
            if isinstance(item, RetryNotice):
                if item.discard_partial:
                    parts.clear()
                    cutter = cut() if cut is not None else None
                yield item
                continue
            if cutter is not None and cutter.stopped:
                if closable(source):
                    break  # text past the cut: the model goes on, so the stream is closed
                continue  # drained for its usage: this stream cannot be closed
            text = item.text if isinstance(item, TextDelta) else str(item)
            if cutter is not None:
                text = cutter.feed(text)
            if text:
                parts.append(text)
                yield TextDelta(text)
    except ModelError as exc:
        if not upstream:
            raise
        failure = exc
    except Exception as exc:
        if not upstream:
            raise
        failure = classify(exc)
        failure.__cause__ = exc
    finally:
        if source is not None and closable(source):
            await close_quietly(source)  # read to its end, cut, or failed: its connection goes
    if failure is not None and getattr(source, "finish_reason", None) and parts:
        failure = None  # 0.8's: a disconnect or stall after the terminal chunk keeps the reply
    if failure is not None:  # 0.8's: the failed call is still counted (its prompt, reasoning)
        if completion is None:
            yield _estimated(source, messages, parts, "error")
        raise failure
    stopped = cutter is not None and cutter.stopped
    refusal = getattr(source, "refusal", None)
    if refusal and not "".join(parts).strip():  # 0.8's: a refusal is the answer when alone
        parts.append(str(refusal))
        yield TextDelta(str(refusal))
    if cutter is not None and (tail := cutter.rest()):
        parts.append(tail)
        yield TextDelta(tail)
    if completion is not None:
        if stopped:
            completion.finish_reason = "stop"
        yield completion
        return
    finish = "stop" if stopped else (getattr(source, "finish_reason", None) or "stop")
    usage = _usage_of(getattr(source, "usage", None))
    if usage is None:
        yield _estimated(source, messages, parts, finish)
    else:
        yield Completion(finish, usage)


def _estimated(source: Any, messages: list[Message], parts: list[str], finish: str) -> Completion:
    """The `Completion` of a stream that reported no usage: its request and what it sent,
    reasoning (`thinking`) included, counted locally."""
    thinking = getattr(source, "thinking", None)
    sent = "".join(parts) + (thinking if isinstance(thinking, str) else "")
    prompt, done = count_messages(messages), count_text(sent)
    return Completion(finish, Usage(prompt, done, prompt + done, 1), usage_reported=False)
