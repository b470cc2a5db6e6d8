"""Upstream 0.8's `cave_agent.models.retry`: whether a provider error is worth retrying
(`is_retryable`), and a call retried on those (`with_retry_typed`).

The decision is cave's classification (`models/failures.py`): an HTTP status is
authoritative (429 and 5xx retry, 4xx do not), an exhausted quota is never retried
even on a 429, and a dropped connection or a timeout is retried. An error with no
status that cave cannot type is retried when its message names a connection or
timeout failure, as 0.8 does for exceptions that carry nothing else.
"""

from __future__ import annotations

import asyncio
import re
from collections.abc import Awaitable, Callable
from typing import TypeVar

from cave_tui.models.base import ErrorKind, ModelError
from cave_tui.models.failures import classify

T = TypeVar("T")

BASE_DELAY = 1.0  # seconds before the first retry; doubled for each further one
MAX_RETRIES = 3  # retries after the first attempt

_TRANSIENT_TEXT = re.compile(
    r"connection (?:reset|aborted|closed|error|dropped)|timed? ?out|temporarily unavailable|"
    r"server disconnected|broken pipe",
    re.IGNORECASE,
)


def is_retryable(error: BaseException) -> bool:
    """Whether retrying the call that raised *error* can succeed."""
    typed = classify(error)
    if typed.kind is ErrorKind.TRANSIENT:
        return True
    if isinstance(error, ModelError) or typed.status is not None:
        return False  # typed by cave, or a status that says no
    return typed.kind is ErrorKind.ERROR and bool(_TRANSIENT_TEXT.search(str(error)))


def backoff(attempt: int) -> float:
    """Seconds to wait before retry *attempt* (1, 2, ...)."""
    return BASE_DELAY * 2 ** (attempt - 1)


async def with_retry_typed(
    operation: Callable[[], Awaitable[T]], *, max_retries: int = MAX_RETRIES
) -> T:
    """*operation*'s result, retried up to *max_retries* times on a retryable error; the
    last error (or one not worth retrying) raised as cave's typed `ModelError`."""
    attempt = 0
    while True:
        try:
            return await operation()
        except Exception as exc:
            if attempt >= max_retries or not is_retryable(exc):
                raise classify(exc) from exc
            attempt += 1
            await asyncio.sleep(backoff(attempt))


__all__ = ["BASE_DELAY", "MAX_RETRIES", "backoff", "is_retryable", "with_retry_typed"]
