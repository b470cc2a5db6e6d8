"""Progress reports and cancellation for loads and saves that run on a worker thread.

A load takes an optional `cancel` (a `threading.Event`, or any callable returning
True when the user asked to stop) and an optional `progress` callback that receives
`Progress` records. The work is split in chunks (row groups, CSV chunks, byte blocks)
and both are checked between chunks, so a cancel takes effect within one chunk.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cave_tui.dataio.errors import LoadCancelled


@dataclass
class Progress:
    """How far a load or save is: `done` of `total` `unit`s, in stage `stage`."""

    done: float
    total: float
    unit: str = "bytes"  # "bytes" | "rows" | "row groups" | "arrays" | "sheets" | "variables"
    stage: str = "reading"  # "reading" | "converting" | "hashing" | "writing"
    path: str = ""
    elapsed: float = 0.0
    rows: int | None = None  # rows read so far, when the unit is another (bytes); None: unknown

    @property
    def fraction(self) -> float:
        return min(self.done / self.total, 1.0) if self.total else 0.0


ProgressCallback = Callable[[Progress], None]
CancelLike = Any  # threading.Event | Callable[[], bool] | None


class Monitor:
    """Checks for cancellation and forwards progress; shared by every loader."""

    def __init__(
        self,
        cancel: CancelLike = None,
        progress: ProgressCallback | None = None,
        path: str = "",
        *,
        action: str = "loading",
    ) -> None:
        self._cancel = cancel
        self._progress = progress
        self.path = path
        self.action = action  # what a cancel stopped: "loading", "writing"
        self.started = time.monotonic()

    @property
    def cancelled(self) -> bool:
        c = self._cancel
        if c is None:
            return False
        if hasattr(c, "is_set"):
            return bool(c.is_set())
        return bool(c())

    def check(self) -> None:
        if self.cancelled:
            raise LoadCancelled(f"{self.action} {self.path} was cancelled; nothing was changed")

    def report(
        self,
        done: float,
        total: float,
        unit: str = "bytes",
        stage: str = "reading",
        *,
        rows: int | None = None,
    ) -> None:
        self.check()
        if self._progress is not None:
            elapsed = time.monotonic() - self.started
            self._progress(Progress(done, total, unit, stage, self.path, elapsed, rows))
