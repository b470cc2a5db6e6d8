"""The model interface: a stream of text deltas, retries and one closing `Completion`.

Every model, scripted or remote, streams. A non-streaming provider call is just
a stream of one delta. The agent reads the same items on every path, so the
streaming and non-streaming paths cannot drift apart.

Upstream CaveAgent's interface is here too (`call` -> `ModelResponse`, `stream` ->
`StreamResponse` of plain strings, `TokenUsage`); `models/adapt.py` reads a model
written to either interface as cave's items, so both plug into `CaveAgent`.
"""

from __future__ import annotations

import logging
from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any, ClassVar

Message = dict[str, Any]  # OpenAI chat format: {"role": ..., "content": ...}

# How long a streamed reply may keep us waiting (docs/models.md says why these values):
FIRST_TOKEN_TIMEOUT = 600.0  # request sent -> first text (a local model reads a long prompt)
STREAM_IDLE_TIMEOUT = 60.0  # one chunk -> the next, once the reply has begun
STALL_RETRIES = 1  # a reply that stalls mid-stream is asked again this many times at most


@dataclass
class Usage:
    """Token counts as the provider reported them (or as counted when it did not)."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    model_calls: int = 0
    cached_tokens: int = 0

    def __add__(self, other: Usage) -> Usage:
        return Usage(
            self.prompt_tokens + other.prompt_tokens,
            self.completion_tokens + other.completion_tokens,
            self.total_tokens + other.total_tokens,
            self.model_calls + other.model_calls,
            self.cached_tokens + other.cached_tokens,
        )

    def to_dict(self) -> dict[str, int]:
        return {
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "total_tokens": self.total_tokens,
            "model_calls": self.model_calls,
            "cached_tokens": self.cached_tokens,
        }


TokenUsage = Usage  # upstream's name; its three counts come first, in the same order


def rate(tokens_per_second: float) -> str:
    """A generation speed as people read it: `0.4`, `7.5`, `42` (a slow model is never `0`)."""
    return f"{tokens_per_second:.1f}" if tokens_per_second < 10 else f"{tokens_per_second:.0f}"


@dataclass
class TextDelta:
    """A piece of the reply's text."""

    text: str


@dataclass
class RetryNotice:
    """The call failed transiently and will be retried after *delay* seconds.

    Text streamed by the failed attempt (if any) is void: the retry starts over.
    """

    attempt: int
    delay: float
    reason: str
    discard_partial: bool = False


@dataclass
class Completion:
    """The end of one model call."""

    finish_reason: str | None
    usage: Usage
    usage_reported: bool = True  # False when counted locally
    raw: Any = field(default=None, repr=False)


StreamItem = TextDelta | RetryNotice | Completion


class ModelResponse:
    """A whole reply, as upstream's `Model.call` returns it: 0.7's `token_usage` and
    0.8's `usage` name one count; 0.8's `thinking` (a reasoning trace) and `refusal` (the
    model declined; kept apart from `content`, which holds it when there is no other)."""

    def __init__(
        self,
        content: str,
        usage: Usage | None = None,
        finish_reason: str | None = None,
        thinking: str | None = None,
        refusal: str | None = None,
        *,
        token_usage: Usage | None = None,
    ) -> None:
        if usage is not None and token_usage is not None and usage is not token_usage:
            raise TypeError("pass usage= (0.8's name) or token_usage= (0.7's), not both")
        self.content = content
        self.usage = usage if usage is not None else token_usage or Usage()
        self.finish_reason = finish_reason
        self.thinking = thinking
        self.refusal = refusal

    @property
    def token_usage(self) -> Usage:
        """Upstream 0.7's name for `usage`."""
        return self.usage

    @token_usage.setter
    def token_usage(self, value: Usage) -> None:
        self.usage = value

    def _fields(self) -> tuple[object, ...]:
        return (self.content, self.usage, self.finish_reason, self.thinking, self.refusal)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, ModelResponse) and self._fields() == other._fields()

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass's

    def __repr__(self) -> str:
        return (
            f"ModelResponse(content={self.content!r}, usage={self.usage!r}, "
            f"finish_reason={self.finish_reason!r}, thinking={self.thinking!r}, "
            f"refusal={self.refusal!r})"
        )


class StreamDelta(str):
    """One piece of a streamed reply (upstream 0.8's): its answer `content` and/or its
    reasoning `thinking`. A `str` of the content too, so code written to 0.7's
    `StreamResponse` (which yielded plain strings) reads it unchanged."""

    content: str | None
    thinking: str | None

    def __new__(cls, content: str | None = None, thinking: str | None = None) -> StreamDelta:
        delta = super().__new__(cls, content or "")
        delta.content = content
        delta.thinking = thinking
        return delta

    def __repr__(self) -> str:
        return f"StreamDelta(content={self.content!r}, thinking={self.thinking!r})"


async def close_quietly(stream: object) -> None:
    """Close *stream* (its `aclose`); a failure to close is logged, never raised, so it
    replaces neither the reply already read nor the error that ended the reading."""
    try:
        await stream.aclose()  # type: ignore[attr-defined]
    except Exception:
        logging.getLogger(__name__).warning("Failed to close the provider stream", exc_info=True)


class ErrorKind(StrEnum):
    """Why a model call failed. Only `TRANSIENT` is worth retrying; the others fail fast."""

    TRANSIENT = "transient"  # a timeout, 408/429/5xx, a dropped connection
    AUTH = "auth"  # no API key, or the server refused it (401/403)
    CONNECTION = "connection"  # connection refused or an unknown host: nothing answers there
    NOT_FOUND = "not_found"  # 404, or a model litellm does not know
    BAD_REQUEST = "bad_request"  # the server refused the request as malformed
    CONTEXT_OVERFLOW = "context_overflow"  # the prompt is longer than the context window
    BILLING = "billing"  # the account is out of credit or quota: a top-up fixes it, not time
    LOCAL_SERVER = "local_server"  # the embedded model's server did not start, or stopped
    ERROR = "error"  # anything else

    @property
    def retryable(self) -> bool:
        return self is ErrorKind.TRANSIENT


class ModelError(RuntimeError):
    """A model call failed for good (after retries), with a kind the agent can act on.

    `kind` is an `ErrorKind` (a `str`, so it compares equal to its value) when it is
    one of those, else the string given.
    """

    def __init__(
        self, message: str, *, kind: str = ErrorKind.ERROR, status: int | None = None
    ) -> None:
        super().__init__(message)
        self.kind: str = ErrorKind(kind) if kind in _KINDS else kind
        self.status = status


_KINDS = frozenset(k.value for k in ErrorKind)


class StreamStalledError(ModelError, TimeoutError):
    """The server sent nothing for *waited* seconds: before the first token (`first`), or
    between two chunks of a reply it had begun. Transient, but retried only a bounded number
    of times (a stalled server tends to stall again). Also a `TimeoutError`, as in 0.8."""

    def __init__(self, message: str, *, waited: float, first: bool) -> None:
        super().__init__(message, kind=ErrorKind.TRANSIENT)
        self.waited = waited
        self.first = first


class ContextOverflowError(ModelError):
    """The provider rejected the prompt as longer than its context window."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, kind=ErrorKind.CONTEXT_OVERFLOW, status=status)


PromptTooLongError = ContextOverflowError  # upstream 0.8's name for it
ProviderError = ModelError  # upstream 0.8's base of a provider's typed failures


class ProviderBillingError(ModelError):
    """The provider's account is out of credit or paid quota (HTTP 402, or a quota message
    such as OpenAI's `insufficient_quota` on a 429): never retried (upstream 0.8's name)."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, kind=ErrorKind.BILLING, status=status)


class Model(ABC):
    """Anything that turns a list of chat messages into a streamed reply."""

    model_id: str = "model"
    # True when `cost()` can estimate a price (a hosted model in litellm's price map).
    priced: ClassVar[bool] = False
    # True when the model bounds the wait for each chunk itself (cave's HTTP models:
    # `first_token_timeout`, `stream_idle_timeout`); the agent's limit guards the others.
    bounds_own_stream: ClassVar[bool] = False
    # True when the server continues a reply the request ends with (an assistant message
    # last: llama.cpp's prefill), so a policy may begin the reply (`BasePolicy.reply_lead`).
    # Hosted APIs start a new message instead: False unless the server is known to.
    continues_reply: bool = False

    @abstractmethod
    def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        """Yield `TextDelta`s and `RetryNotice`s, then exactly one `Completion`.

        A subclass written to upstream's interface may instead return a
        `StreamResponse` (or any async iterator of strings) and take no options:
        the agent reads it through `models.adapt.stream_items`.
        """

    async def complete(self, messages: list[Message], **kwargs: Any) -> tuple[str, Completion]:
        """Non-streaming convenience: the whole text and the closing `Completion`."""
        parts: list[str] = []
        completion: Completion | None = None
        async for item in self.stream(messages, **kwargs):
            if isinstance(item, TextDelta):
                parts.append(item.text)
            elif isinstance(item, RetryNotice) and item.discard_partial:
                parts.clear()
            elif isinstance(item, Completion):
                completion = item
        if completion is None:
            raise ModelError("the model stream ended without a completion")
        return "".join(parts), completion

    async def call(self, messages: list[Message], **kwargs: Any) -> ModelResponse:
        """Upstream's non-streaming call: the whole reply with its usage. A model written
        to upstream 0.8's interface answers it with its `_complete` (its provider's errors
        become `ModelError`s, of kind `error`); others with their stream."""
        if type(self)._complete is not Model._complete:
            try:
                return await self._complete(messages)
            except ModelError:
                raise
            except Exception as exc:
                raise ModelError(f"{type(exc).__name__}: {exc}") from exc
        text, completion = await self.complete(messages, **kwargs)
        return ModelResponse(text, completion.usage, completion.finish_reason)

    async def _complete(self, messages: list[Message]) -> ModelResponse:
        """Upstream 0.8's one non-streaming request (a subclass written to it implements
        it; cave's models answer `call` from their stream instead)."""
        raise NotImplementedError

    @staticmethod
    def _extract_token_usage(response: Any) -> Usage:
        """Upstream's helper: the usage of an OpenAI-style response (zeros if none); a
        total the provider left out is the sum of the parts it reported."""
        usage = getattr(response, "usage", None)
        if not usage:
            return Usage()
        prompt = getattr(usage, "prompt_tokens", 0) or 0
        completion = getattr(usage, "completion_tokens", 0) or 0
        return Usage(prompt, completion, getattr(usage, "total_tokens", 0) or prompt + completion)

    @staticmethod
    def _extract_response(response: Any) -> tuple[str, str | None]:
        """Upstream 0.7's helper: the text and finish reason of an OpenAI-style response."""
        choices = getattr(response, "choices", None) or []
        if not choices:
            return "", None
        return choices[0].message.content or "", choices[0].finish_reason

    @classmethod
    def _build_response(cls, response: Any) -> ModelResponse:
        """Upstream 0.8's helper: the `ModelResponse` of an OpenAI-style response, its
        refusal kept apart and standing in for absent content."""
        content, finish_reason = cls._extract_response(response)
        choices = getattr(response, "choices", None) or []
        message = choices[0].message if choices else None
        refusal = getattr(message, "refusal", None)
        thinking = getattr(message, "reasoning", None) or getattr(
            message, "reasoning_content", None
        )
        return ModelResponse(
            content or refusal or "",
            cls._extract_token_usage(response),
            finish_reason,
            thinking,
            refusal,
        )

    @property
    def label(self) -> str:
        return self.model_id

    async def aclose(self) -> None:
        """Release what the model holds (upstream 0.8's). cave's models open a connection
        per call and close it with the call's stream, so there is nothing left to release."""

    async def __aenter__(self) -> Model:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    def cost(self, usage: Usage) -> float | None:
        """USD estimate of *usage*; None when this model has no price (`priced` is False)."""
        return None
