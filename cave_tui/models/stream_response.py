"""`StreamResponse`: upstream's streamed reply (0.7's `__anext__` or 0.8's `_open_stream`),
re-opened when its connect drops before any text (`models.retry`)."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator
from typing import Any

from cave_tui.models import retry
from cave_tui.models.base import Model, StreamDelta, Usage, close_quietly


class StreamResponse:
    """Upstream's stream: an async iterator of the reply's pieces; `usage`,
    `finish_reason`, the whole `thinking` and any `refusal` once it is exhausted.

    Written to 0.8's interface, a subclass implements `_open_stream()` (the provider's
    raw stream of OpenAI-style chunks) and this class reads it, yielding `StreamDelta`s.
    Written to 0.7's, it implements `__anext__` and may call `_process_stream_chunk`,
    whose `StreamDelta` is the text 0.7 returned. `models.adapt.stream_items` turns
    either into cave's items.
    """

    def __init__(self) -> None:
        self.usage = Usage()
        self.finish_reason: str | None = None
        self.thinking = ""
        self.refusal = ""
        self._iterator: AsyncIterator[Any] | None = None
        self._response: Any = None
        self._yielded_any = False  # a piece was returned: a retry would repeat it
        self._connect_retries = 0

    async def _open_stream(self) -> AsyncIterator[Any]:
        """The provider's raw stream (0.8's subclasses implement it)."""
        raise NotImplementedError(f"{type(self).__name__} implements neither _open_stream()")

    def _process_stream_chunk(self, chunk: Any) -> StreamDelta | None:
        """The piece of an OpenAI-style chunk, if any; records its usage, finish reason,
        reasoning (`thinking`) and refusal (`refusal`, never part of the content)."""
        if getattr(chunk, "usage", None):
            self.usage = Model._extract_token_usage(chunk)
        choices = getattr(chunk, "choices", None) or []
        if not choices:
            return None
        choice = choices[0]
        if choice.finish_reason:
            self.finish_reason = choice.finish_reason
        delta = getattr(choice, "delta", None)
        if delta is None:
            return None
        thinking = getattr(delta, "reasoning", None) or getattr(delta, "reasoning_content", None)
        refusal = getattr(delta, "refusal", None)
        content = getattr(delta, "content", None)
        if thinking:
            self.thinking += thinking
        if refusal:
            self.refusal += refusal
        if thinking or content:
            return StreamDelta(content=content, thinking=thinking)
        return None

    def __aiter__(self) -> StreamResponse:
        return self

    async def __anext__(self) -> str:
        while True:
            try:
                if self._iterator is None:
                    self._response = await self._open_stream()
                    self._iterator = self._response.__aiter__()
                chunk = await self._iterator.__anext__()
            except StopAsyncIteration:
                raise
            except Exception as exc:
                await self._reopen_or_raise(exc)
                continue
            delta = self._process_stream_chunk(chunk)
            if delta is not None:
                self._yielded_any = True
                return delta

    async def _reopen_or_raise(self, error: Exception) -> None:
        """Before any piece was yielded, a retryable failure (a dropped connect, a 5xx)
        closes the attempt and opens the stream again after a backoff, up to
        `models.retry.MAX_RETRIES` times (0.8's SSE-connect retry); else *error* is raised.
        Once text was yielded a retry would repeat it, so the error propagates."""
        tried = getattr(self, "_connect_retries", 0)  # a subclass may skip __init__
        if getattr(self, "_yielded_any", False) or tried >= retry.MAX_RETRIES:
            raise error
        if not retry.is_retryable(error):
            raise error
        self._connect_retries = tried + 1
        await close_quietly(self)  # a connection that dies on close too is still retried
        await asyncio.sleep(retry.backoff(self._connect_retries))

    async def aclose(self) -> None:
        """Release the provider's stream (safe to call more than once)."""
        response, self._response, self._iterator = self._response, None, None
        closer = getattr(response, "aclose", None) or getattr(response, "close", None)
        if closer is not None:
            outcome = closer()
            if hasattr(outcome, "__await__"):
                await outcome


__all__ = ["StreamResponse"]
