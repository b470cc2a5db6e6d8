"""What carries over between `compact_if_needed` calls: the summariser's failure count."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class CompactionState:
    """Consecutive failed summaries; at `MAX_CONSECUTIVE_FAILURES` summaries stop (trim only)."""

    consecutive_failures: int = 0


__all__ = ["CompactionState"]
