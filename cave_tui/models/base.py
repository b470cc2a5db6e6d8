"""The model interface: a stream of text deltas, retries and one closing `Completion`.

Every model, scripted or remote, streams. A non-streaming provider call is just
a stream of one delta. The agent reads the same items on every path, so the
streaming and non-streaming paths cannot drift apart.

Upstream CaveAgent's interface is here too (`call` -> `ModelResponse`, `stream` ->
`StreamResponse` of plain strings, `TokenUsage`); `models/adapt.py` reads a model
written to either interface as cave's items, so both plug into `CaveAgent`.
"""

from __future__ import annotations

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


@dataclass
class ModelResponse:
    """A whole reply, as upstream's `Model.call` returns it."""

    content: str
    token_usage: Usage = field(default_factory=Usage)
    finish_reason: str | None = None


class StreamResponse(ABC):
    """Upstream's stream: an async iterator of text; `usage` and `finish_reason` once exhausted.

    Models written to upstream's interface return one from `stream(messages)`;
    `models.adapt.stream_items` turns it into cave's items.
    """

    def __init__(self) -> None:
        self.usage = Usage()
        self.finish_reason: str | None = None

    def _process_stream_chunk(self, chunk: Any) -> str | None:
        """The text of an OpenAI-style chunk, if any; records its finish reason."""
        choices = getattr(chunk, "choices", None) or []
        if choices:
            choice = choices[0]
            if choice.finish_reason:
                self.finish_reason = choice.finish_reason
                return None
            if choice.delta.content:
                return str(choice.delta.content)
        return None

    def __aiter__(self) -> StreamResponse:
        return self

    @abstractmethod
    async def __anext__(self) -> str: ...


class ErrorKind(StrEnum):
    """Why a model call failed. Only `TRANSIENT` is worth retrying; the others fail fast."""

    TRANSIENT = "transient"  # a timeout, 408/429/5xx, a dropped connection
    AUTH = "auth"  # no API key, or the server refused it (401/403)
    CONNECTION = "connection"  # connection refused or an unknown host: nothing answers there
    NOT_FOUND = "not_found"  # 404, or a model litellm does not know
    BAD_REQUEST = "bad_request"  # the server refused the request as malformed
    CONTEXT_OVERFLOW = "context_overflow"  # the prompt is longer than the context window
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


class StreamStalledError(ModelError):
    """The server sent nothing for *waited* seconds: before the first token (`first`), or
    between two chunks of a reply it had begun. Transient, but retried only a bounded number
    of times (a stalled server tends to stall again)."""

    def __init__(self, message: str, *, waited: float, first: bool) -> None:
        super().__init__(message, kind=ErrorKind.TRANSIENT)
        self.waited = waited
        self.first = first


class ContextOverflowError(ModelError):
    """The provider rejected the prompt as longer than its context window."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, kind=ErrorKind.CONTEXT_OVERFLOW, status=status)


class Model(ABC):
    """Anything that turns a list of chat messages into a streamed reply."""

    model_id: str = "model"
    # True when `cost()` can estimate a price (a hosted model in litellm's price map).
    priced: ClassVar[bool] = False

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
        """Upstream's non-streaming call: the whole reply with its usage."""
        text, completion = await self.complete(messages, **kwargs)
        return ModelResponse(text, completion.usage, completion.finish_reason)

    @staticmethod
    def _extract_token_usage(response: Any) -> Usage:
        """Upstream's helper: the usage of an OpenAI-style response (zeros if none)."""
        usage = getattr(response, "usage", None)
        if not usage:
            return Usage()
        return Usage(
            getattr(usage, "prompt_tokens", 0) or 0,
            getattr(usage, "completion_tokens", 0) or 0,
            getattr(usage, "total_tokens", 0) or 0,
        )

    @staticmethod
    def _extract_response(response: Any) -> tuple[str, str | None]:
        """Upstream's helper: the text and finish reason of an OpenAI-style response."""
        choices = getattr(response, "choices", None) or []
        if not choices:
            return "", None
        return choices[0].message.content or "", choices[0].finish_reason

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
