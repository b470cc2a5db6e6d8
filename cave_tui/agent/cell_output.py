"""Streaming a running cell's output to the front ends as `OutputEvent`s.

A runtime hands each write of a cell to `OutputThrottle.write` (from the cell's thread,
or the kernel's I/O thread); the throttle hands it to the event loop at most every
`OUTPUT_INTERVAL` seconds, at most `OUTPUT_CHUNK` characters at a time (the newest; the
rest is counted as dropped), so a fast printing loop cannot flood a front end.
`CellEvents` runs one cell and yields the events that arrive while it runs (its output,
forwarded sub-agent events), then its `ExecutionResult`.
"""

from __future__ import annotations

import asyncio
import threading
import time
from collections import deque
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.capture import sanitize_surrogates

OUTPUT_INTERVAL = 0.1  # seconds between two output events of one cell
OUTPUT_CHUNK = 16_000  # characters per output event, at most


class OutputThrottle:
    """Collects text from any thread; calls `deliver(text, dropped)` on *loop*, throttled."""

    def __init__(
        self,
        loop: asyncio.AbstractEventLoop,
        deliver: Callable[[str, int], None],
        *,
        interval: float = OUTPUT_INTERVAL,
        limit: int = OUTPUT_CHUNK,
    ) -> None:
        self.loop = loop
        self.deliver = deliver
        self.interval = interval
        self.limit = limit
        self._lock = threading.Lock()
        self._parts: deque[str] = deque()
        self._size = 0
        self._dropped = 0
        self._armed = False
        self._closed = False
        self._last = -1e9
        self._timer: asyncio.TimerHandle | None = None

    def write(self, text: str) -> None:
        """Add *text* (any thread); a delivery is scheduled if none is."""
        if not text:
            return
        with self._lock:
            if self._closed:
                return
            self._parts.append(text)
            self._size += len(text)
            excess = self._size - self.limit
            while excess > 0:  # keep the newest `limit` characters
                first = self._parts[0]
                cut = min(len(first), excess)
                if cut == len(first):
                    self._parts.popleft()
                else:
                    self._parts[0] = first[cut:]
                self._size -= cut
                self._dropped += cut
                excess -= cut
            if self._armed:
                return
            self._armed = True
        try:
            self.loop.call_soon_threadsafe(self._arm)
        except RuntimeError:  # the loop is closed: nobody to deliver to
            pass

    def _arm(self) -> None:
        if self._closed:
            return
        delay = max(self._last + self.interval - time.monotonic(), 0.0)
        self._timer = self.loop.call_later(delay, self.flush)

    def flush(self) -> None:
        """Deliver what was collected (on the loop's thread)."""
        with self._lock:
            text, dropped = "".join(self._parts), self._dropped
            self._parts.clear()
            self._size = self._dropped = 0
            self._armed = False
        self._last = time.monotonic()
        if text or dropped:
            self.deliver(text, dropped)

    def close(self) -> None:
        """Deliver the rest now; later writes are ignored."""
        if self._timer is not None:
            self._timer.cancel()
        self.flush()
        with self._lock:
            self._closed = True


class CellEvents:
    """The events of one running cell, in the order they arrive, then its result."""

    def __init__(self, step: int = 0, agent: str | None = None) -> None:
        self.step = step
        self.agent = agent
        self.loop = asyncio.get_running_loop()
        self.queue: asyncio.Queue[ev.Event] = asyncio.Queue()
        self.output = OutputThrottle(self.loop, self._output)

    def _output(self, text: str, dropped: int) -> None:
        text = sanitize_surrogates(text)  # what it printed, as valid Unicode (as the result)
        event = ev.OutputEvent(content=text, dropped=dropped, step=self.step, agent=self.agent)
        self.queue.put_nowait(event)

    async def run(
        self,
        cell: Awaitable[ExecutionResult],
        on_stop: Callable[[], Awaitable[Any]] | None = None,
    ) -> AsyncIterator[ev.Event | ExecutionResult]:
        """Run *cell*; yield queued events while it runs, then the rest, then its result.

        Cancelled, it awaits *on_stop* (if any), then cancels the cell (the runtime
        interrupts it) and waits for it to end.
        """
        task = asyncio.ensure_future(cell)
        try:
            while not task.done():
                getter = asyncio.ensure_future(self.queue.get())
                try:
                    await asyncio.wait({task, getter}, return_when=asyncio.FIRST_COMPLETED)
                finally:
                    if not getter.done():
                        getter.cancel()
                if getter.done() and not getter.cancelled():
                    yield getter.result()
            self.output.close()  # the output written just before the end comes first
            while not self.queue.empty():
                yield self.queue.get_nowait()
        finally:
            self.output.close()
            if not task.done():
                if on_stop is not None:
                    await on_stop()
                task.cancel()
                await asyncio.gather(task, return_exceptions=True)
        yield task.result()
