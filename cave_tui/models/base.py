"""The model interface: a stream of text deltas, retries and one closing `Completion`.

Every model, scripted or remote, streams. A non-streaming provider call is just
a stream of one delta. The agent reads the same items on every path, so the
streaming and non-streaming paths cannot drift apart.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from typing import Any

Message = dict[str, Any]  # OpenAI chat format: {"role": ..., "content": ...}


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


class ModelError(RuntimeError):
    """A model call failed for good (after retries), with a kind the agent can act on."""

    def __init__(self, message: str, *, kind: str = "error", status: int | None = None) -> None:
        super().__init__(message)
        self.kind = kind  # "context_overflow" | "bad_request" | "auth" | "transient" | "error"
        self.status = status


class ContextOverflowError(ModelError):
    """The provider rejected the prompt as longer than its context window."""

    def __init__(self, message: str, status: int | None = None) -> None:
        super().__init__(message, kind="context_overflow", status=status)


class Model(ABC):
    """Anything that turns a list of chat messages into a streamed reply."""

    model_id: str = "model"

    @abstractmethod
    def stream(self, messages: list[Message], **kwargs: Any) -> AsyncIterator[StreamItem]:
        """Yield `TextDelta`s and `RetryNotice`s, then exactly one `Completion`."""

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

    @property
    def label(self) -> str:
        return self.model_id
