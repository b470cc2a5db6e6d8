"""Progress of a long tool call told to the client: each step as it comes, and a heartbeat.

The client gets `notifications/progress` only when its request carried a `progressToken`
(the SDK sends nothing otherwise). Each notification's `progress` is one more than the last
(the protocol wants it to increase); the heartbeat repeats the last message every
`HEARTBEAT` seconds, so a client that resets its timeout on progress never times out on a
long cell.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass, field

from cave_tui.printable import printable_line
from cave_tui.runtime.tasks import cancel_and_wait

HEARTBEAT = 5.0  # seconds between two notifications while nothing else is told

# `Context.report_progress(progress, total, message)` of the request being served
ReportProgress = Callable[[float, float | None, str | None], Awaitable[None]]


@dataclass
class ProgressTeller:
    """The progress notifications of one request, sent through *report*."""

    report: ReportProgress
    heartbeat: float = HEARTBEAT
    count: int = 0
    last: str = "started"
    started: float = field(default_factory=time.monotonic)

    async def tell(self, message: str) -> None:
        """One notification saying *message* (printable, one line)."""
        self.last = printable_line(message)
        await self._send(self.last)

    async def _send(self, text: str) -> None:
        self.count += 1
        await self.report(self.count, None, text)

    async def _beat(self) -> None:
        while True:
            before = self.count
            await asyncio.sleep(self.heartbeat)
            if self.count == before:  # nothing told since the last beat
                seconds = time.monotonic() - self.started
                await self._send(f"{self.last} ({seconds:.0f} s)")

    @contextlib.asynccontextmanager
    async def beating(self) -> AsyncIterator[ProgressTeller]:
        """The teller, with its heartbeat running until the block ends."""
        beat = asyncio.create_task(self._beat())
        try:
            yield self
        finally:
            with contextlib.suppress(Exception):  # a failed beat: the request goes on
                await cancel_and_wait(beat)  # a client's cancel landing now is raised
