"""A circuit breaker for the summariser: stop calling a failing model, then try again.

Upstream's breaker opened after three failed summaries and never closed again
for the rest of the session. This one half-opens after a cool-down: the next
compaction may try one summary; success closes it, failure re-opens it for
another cool-down.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from enum import StrEnum


class BreakerState(StrEnum):
    CLOSED = "closed"  # summaries allowed
    OPEN = "open"  # summaries skipped until the cool-down ends
    HALF_OPEN = "half_open"  # one trial summary allowed


class CircuitBreaker:
    """Opens after *max_failures* consecutive failures; half-opens after *cooldown* s."""

    def __init__(
        self,
        max_failures: int = 3,
        cooldown: float = 300.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if max_failures < 1:
            raise ValueError("max_failures must be at least 1")
        self.max_failures = max_failures
        self.cooldown = cooldown
        self.clock = clock
        self.failures = 0
        self.opened_at: float | None = None
        self._state = BreakerState.CLOSED

    @property
    def state(self) -> BreakerState:
        if self._state is BreakerState.OPEN and self.retry_in() <= 0:
            self._state = BreakerState.HALF_OPEN
        return self._state

    def retry_in(self) -> float:
        """Seconds until an open breaker half-opens (0 when not open)."""
        if self._state is not BreakerState.OPEN or self.opened_at is None:
            return 0.0
        return max(0.0, self.opened_at + self.cooldown - self.clock())

    def allow(self) -> bool:
        return self.state is not BreakerState.OPEN

    def record_success(self) -> None:
        self.failures = 0
        self.opened_at = None
        self._state = BreakerState.CLOSED

    def record_failure(self) -> None:
        self.failures += 1
        if self._state is BreakerState.HALF_OPEN or self.failures >= self.max_failures:
            self._state = BreakerState.OPEN
            self.opened_at = self.clock()
