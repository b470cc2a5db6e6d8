"""`ChatStreamModel`: what every HTTP model client shares, whichever library sends the request.

Retries (ours alone), the first-token and idle limits of a streamed reply, the finish reason
a whole reply must end with, usage as the server reported it (else counted here), the
refusal of a kernel posing as a model server, and a loopback server that is not running
named at once. A subclass only opens the request (`_open_stream`, `_complete_request`) and
says where it goes (`_prepare`): `LiteLLMModel` through litellm, `OpenAIHTTPModel` over httpx.
"""

from __future__ import annotations

import asyncio
import datetime as _dt
import time
from abc import abstractmethod
from collections.abc import AsyncIterator, Awaitable
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from typing import Any, ClassVar, Protocol

from tenacity import RetryCallState, Retrying, wait_exponential_jitter

from cave_tui.models.base import (
    FIRST_TOKEN_TIMEOUT,
    STALL_RETRIES,
    STREAM_IDLE_TIMEOUT,
    Completion,
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
from cave_tui.models.credentials import Credentials
from cave_tui.models.endpoints import is_loopback, kernel_owned, resolved_endpoint
from cave_tui.models.failures import CallTarget, classify
from cave_tui.models.reach import unreachable
from cave_tui.models.tokens import count_messages, count_text

MAX_RETRY_AFTER = 60.0
CLOSE_TIMEOUT = 5.0  # closing a stalled stream's connection


@dataclass(frozen=True)
class Chunk:
    """One piece of a streamed reply, whichever client read it."""

    text: str | None = None
    finish_reason: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True)
class WholeReply:
    """A reply asked for without streaming."""

    text: str
    finish_reason: str | None
    usage: Usage | None
    raw: object = None


class ChunkStream(Protocol):
    """The chunks of one streamed reply; `aclose` releases its connection."""

    def __anext__(self) -> Awaitable[Chunk]: ...

    async def aclose(self) -> None: ...


def retry_after_seconds(exc: BaseException) -> float | None:
    """The server's Retry-After (seconds or HTTP date), if the error carries one."""
    headers: Any = None
    response = getattr(exc, "response", None)
    if response is not None:
        headers = getattr(response, "headers", None)
    if not headers:
        headers = getattr(exc, "litellm_response_headers", None) or getattr(exc, "headers", None)
    if not headers:
        return None
    try:
        value = headers.get("retry-after") or headers.get("Retry-After")
    except Exception:
        return None
    if value is None:
        return None
    try:
        return max(0.0, min(float(value), MAX_RETRY_AFTER))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(str(value))
        delta = (when - _dt.datetime.now(when.tzinfo)).total_seconds()
        return max(0.0, min(delta, MAX_RETRY_AFTER))
    except Exception:
        return None


def usage_from(raw: object) -> Usage | None:
    """The usage of an OpenAI-style `usage` (a dict or an object); None when it has none."""
    if raw is None:
        return None

    def get(key: str, default: Any = None) -> Any:
        return raw.get(key, default) if isinstance(raw, dict) else getattr(raw, key, default)

    prompt = get("prompt_tokens", None)
    completion = get("completion_tokens", None)
    if prompt is None and completion is None:
        return None
    prompt = int(prompt or 0)
    completion = int(completion or 0)
    total = int(get("total_tokens", None) or prompt + completion)
    cached = 0
    details = get("prompt_tokens_details", None)
    if details is not None:
        cached_value = (
            details.get("cached_tokens")
            if isinstance(details, dict)
            else getattr(details, "cached_tokens", 0)
        )
        cached = int(cached_value or 0)
    return Usage(prompt, completion, total, model_calls=1, cached_tokens=cached)


WIRE_CAPS = ("max_tokens", "max_completion_tokens")  # a request's output cap, both spellings


def declared_output_cap(declared: int | None, kwargs: dict[str, Any]) -> int | None:
    """0.8's `max_output_tokens=`: the cap per reply, sent as `max_tokens` unless *kwargs*
    (the request's) give a wire cap, which must agree; only one wire spelling may be given.
    Returns the cap (declared, or the wire one), None when there is none."""
    given = [name for name in WIRE_CAPS if kwargs.get(name) is not None]
    if len(given) > 1:
        raise ValueError(f"give only one of {', '.join(given)}: they are the same output cap")
    wire = kwargs[given[0]] if given else None
    if declared is None:
        return wire
    if wire is not None and wire != declared:
        raise ValueError(
            f"max_output_tokens={declared} and {given[0]}={wire} disagree: give one cap"
        )
    if wire is None:
        kwargs["max_tokens"] = declared
    return declared


def counted_usage(messages: list[Message], text: str) -> Usage:
    """Usage counted here, for a server that reported none."""
    prompt = count_messages(messages)
    done = count_text(text)
    return Usage(prompt, done, prompt + done, model_calls=1)


class ChatStreamModel(Model):
    """A chat model behind an HTTP API (see the module docstring for what it promises).

    A streamed reply must bring its first text within `first_token_timeout` seconds of the
    request (default: `request_timeout`) and each later chunk within `stream_idle_timeout`
    of the one before (0 or None: no limit); a stall raises `StreamStalledError`. A reply
    that stalls mid-stream is asked again at most `stall_retries` times; a first-token stall
    is not (the same prompt would keep the server as long again).
    """

    bounds_own_stream: ClassVar[bool] = True

    def __init__(
        self,
        model_id: str,
        *,
        api_base: str | None = None,
        api_key: str | None = None,
        stream: bool = True,
        max_retries: int = 5,
        retry_initial: float = 0.5,
        retry_max: float = 8.0,
        request_timeout: float = FIRST_TOKEN_TIMEOUT,
        credentials: Credentials | None = None,
        first_token_timeout: float | None = None,
        stream_idle_timeout: float | None = STREAM_IDLE_TIMEOUT,
        stall_retries: int = STALL_RETRIES,
    ) -> None:
        self.model_id = model_id
        self.api_key = api_key
        self.credentials = credentials
        self.api_base = self.base_url = api_base
        self.use_stream = stream
        self.max_retries = max_retries
        self.request_timeout = request_timeout
        self.first_token_timeout = (
            request_timeout if first_token_timeout is None else first_token_timeout
        )
        self.stream_idle_timeout = stream_idle_timeout
        self.stall_retries = stall_retries
        self._wait = wait_exponential_jitter(
            multiplier=retry_initial, max=retry_max, jitter=retry_initial
        )
        self._retrying = Retrying(wait=self._wait)  # the owner a RetryCallState names

    @property
    def http_timeout(self) -> float:
        """The HTTP client's own limit: never shorter than the first token's wait."""
        return max(self.request_timeout, self.first_token_timeout or 0.0)

    # --- what a subclass provides ---------------------------------------------------------

    @abstractmethod
    async def _prepare(self) -> CallTarget:
        """Ready the client (import it) and say where calls go; `ModelError` when no call
        can be made (an unknown model, a missing key)."""

    @abstractmethod
    async def _open_stream(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> ChunkStream:
        """Send a streamed request; return once the server has answered it."""

    @abstractmethod
    async def _complete_request(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> WholeReply:
        """Send a request for the whole reply at once."""

    # --- shared -------------------------------------------------------------------------

    def _delay(self, attempt: int, exc: BaseException) -> float:
        after = retry_after_seconds(exc)
        if after is not None:
            return after
        state = RetryCallState(retry_object=self._retrying, fn=None, args=(), kwargs={})
        state.attempt_number = attempt
        return float(self._wait(state))

    async def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        """Stream one reply; retry transient failures, fail at once on the others
        (a missing or refused key, a refused connection, an unknown host or model, 404).
        Until a reply has come, a server on loopback at the URL the user named is first
        asked for a connection (reach.py), before the client is imported."""
        if self.api_base and not self.__dict__.get("_reached"):
            named = CallTarget(self.model_id, self.api_base)
            if (error := await asyncio.to_thread(unreachable, named)) is not None:
                raise error
        target = await self._prepare()
        attempt = stalls = 0
        while True:
            attempt += 1
            emitted = False
            await self._refuse_a_kernels_server(target)
            try:
                if self.use_stream:
                    async for item in self._stream_once(messages, kwargs, target):
                        if isinstance(item, TextDelta):
                            emitted = True
                        yield item
                else:
                    async for item in self._complete_once(messages, kwargs, target):
                        yield item
                self.__dict__["_reached"] = True
                return
            except asyncio.CancelledError:
                raise
            except Exception as exc:
                error = classify(exc, target)
                if isinstance(error, StreamStalledError):
                    stalls += 1
                    if error.first or stalls > self.stall_retries:
                        raise error from exc
                if error.kind != ErrorKind.TRANSIENT or attempt > self.max_retries:
                    if error.kind == ErrorKind.TRANSIENT:
                        error = ModelError(
                            f"gave up after {attempt} attempts at {target.where}: {error}",
                            kind=ErrorKind.TRANSIENT,
                            status=error.status,
                        )
                    raise error from exc
                delay = self._delay(attempt, exc)
                yield RetryNotice(
                    attempt=attempt, delay=delay, reason=str(error), discard_partial=emitted
                )
                await asyncio.sleep(delay)

    async def _refuse_a_kernels_server(self, target: CallTarget) -> None:
        """Raise `ModelError` when the server this request goes to is a cave kernel's (one
        posing as a model server on loopback), before anything is sent to it."""
        endpoint = self.api_base or resolved_endpoint(target.provider, None, None)
        endpoint = endpoint or target.endpoint
        if is_loopback(endpoint) and await asyncio.to_thread(kernel_owned, endpoint):
            raise ModelError(
                f"refusing to send the conversation to {endpoint}: a cave kernel listens "
                "there (model code posing as a model server); start the real server on "
                "another port, or stop the kernel that holds it",
                kind=ErrorKind.CONNECTION,
            )

    def _stalled(self, target: CallTarget, waited: float, first: bool) -> StreamStalledError:
        where = f"{target.model or self.model_id} at {target.where}"
        if first:
            return StreamStalledError(
                f"{where} sent no reply within {waited:g} s of the request (first-token "
                "timeout; a local model reading a long prompt may need more: "
                "--first-token-timeout)",
                waited=waited,
                first=True,
            )
        return StreamStalledError(
            f"{where} stopped sending mid-reply: nothing for {waited:g} s (stream idle "
            "timeout: --stream-idle-timeout)",
            waited=waited,
            first=False,
        )

    async def _within(
        self, step: Awaitable[Any], limit: float | None, target: CallTarget, first: bool
    ) -> Any:
        """Await *step*, raising `StreamStalledError` when it takes over *limit* seconds."""
        if limit is None:
            return await step
        try:
            return await asyncio.wait_for(step, max(limit, 0.0))
        except TimeoutError:
            waited = self.first_token_timeout if first and self.first_token_timeout else limit
            raise self._stalled(target, waited, first) from None

    async def _stream_once(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> AsyncIterator[StreamItem]:
        first_by = time.monotonic() + (self.first_token_timeout or 0.0)

        def first_left() -> float | None:
            return first_by - time.monotonic() if self.first_token_timeout else None

        opening = self._open_stream(messages, extra, target)
        chunks: ChunkStream = await self._within(opening, first_left(), target, True)
        finish: str | None = None
        usage: Usage | None = None
        parts: list[str] = []
        try:
            while True:
                begun = bool(parts)
                limit = (self.stream_idle_timeout or None) if begun else first_left()
                try:
                    chunk: Chunk = await self._within(chunks.__anext__(), limit, target, not begun)
                except StopAsyncIteration:
                    break
                except StreamStalledError:
                    if finish is not None:
                        break  # finished; only the usage chunk or the close is late
                    raise
                if chunk.text:
                    parts.append(chunk.text)
                    yield TextDelta(chunk.text)
                if chunk.finish_reason:
                    finish = chunk.finish_reason
                if chunk.usage is not None and (
                    chunk.usage.prompt_tokens or chunk.usage.completion_tokens
                ):
                    usage = chunk.usage
        finally:
            try:
                await asyncio.wait_for(chunks.aclose(), CLOSE_TIMEOUT)
            except Exception:
                pass
        if finish is None:
            # A stream that ends without a finish reason was cut, not finished.
            raise ModelError(
                "the stream ended without a finish reason (connection dropped?)",
                kind=ErrorKind.TRANSIENT,
            )
        reported = usage is not None
        if usage is None:
            usage = counted_usage(messages, "".join(parts))
        yield Completion(finish_reason=finish, usage=usage, usage_reported=reported)

    async def _complete_once(
        self, messages: list[Message], extra: dict[str, Any], target: CallTarget
    ) -> AsyncIterator[StreamItem]:
        reply = await self._complete_request(messages, extra, target)
        reported = reply.usage is not None
        usage = reply.usage if reply.usage is not None else counted_usage(messages, reply.text)
        if reply.text:
            yield TextDelta(reply.text)
        yield Completion(
            finish_reason=reply.finish_reason, usage=usage, usage_reported=reported, raw=reply.raw
        )
