"""`MemoryWatchdog`: stops an in-process cell when this process passes its memory limit.

While a cell runs, a daemon thread samples the process's RSS every `interval` seconds; it
waits, never waking, while no cell runs. Past the limit it calls the runtime's `stop` (an
asynchronous exception in the cell's thread, which Python delivers at the next bytecode).
A single C call (a pandas merge, a numpy allocation) runs no bytecode, so it cannot be
stopped: when the cell still runs `grace` seconds after the stop and memory still grows,
`warn` gets, once, the plain message that the in-process runtime cannot stop it.
"""

from __future__ import annotations

import linecache
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from types import FrameType

from cave_tui.runtime.memory import format_bytes, process_rss
from cave_tui.runtime.shipped.tracebacks import is_cell_file

DEFAULT_INTERVAL = 0.05  # seconds between samples while a cell runs
DEFAULT_GRACE = 1.0  # seconds a stopped cell may take before it is called unstoppable
# A cell that starts over the limit (an earlier C call grew the process) may still run:
# it is stopped only once it grows this much more, so `del big` can always run.
DEFAULT_HEADROOM = 256 << 20
KERNEL_HINT = (
    "To be protected from memory blow-ups, use the isolated kernel (the app's default: drop "
    "--in-process; in code, IPyKernelRuntime), which has its own memory limit."
)


@dataclass
class CellWatch:
    """One running cell under watch: its threshold and, once past it, what happened."""

    thread_id: int
    started_with: int  # the process's RSS when the cell started
    threshold: int  # the RSS at which it is stopped: the limit, or more (DEFAULT_HEADROOM)
    warn: Callable[[str], None]
    tripped_with: int | None = None  # RSS when the threshold was passed
    peak: int = 0
    warned: bool = False
    _stopped_at: float = field(default=0.0, repr=False)  # monotonic time of the last stop

    @property
    def tripped(self) -> bool:
        """The cell passed its threshold and was told to stop."""
        return self.tripped_with is not None


class MemoryWatchdog:
    """Samples this process's memory while a cell runs; past *limit*, calls *stop*.

    *stop* delivers the stop to the cell's thread and returns True if a cell was there to
    stop. `watch()` arms it for one cell; `close()` ends its thread.
    """

    def __init__(
        self,
        limit: int,
        stop: Callable[[], bool],
        *,
        interval: float = DEFAULT_INTERVAL,
        grace: float = DEFAULT_GRACE,
        headroom: int = DEFAULT_HEADROOM,
        sample: Callable[[], int] = process_rss,
    ) -> None:
        self.limit = limit
        self.interval = interval
        self.grace = grace
        self.headroom = headroom
        self.samples = 0  # samples counted for a running cell (none once it has ended)
        self.last: CellWatch | None = None  # the watch of the running or last cell
        self._stop = stop
        self._sample = sample
        self._cond = threading.Condition()
        self._cell: CellWatch | None = None
        self._closed = False
        self._thread: threading.Thread | None = None

    @contextmanager
    def watch(self, thread_id: int, warn: Callable[[str], None]) -> Iterator[CellWatch]:
        """Watch the cell that runs on *thread_id* for the duration of the block."""
        started = self._sample()
        threshold = self.limit if started < self.limit else started + self.headroom
        cell = CellWatch(thread_id, started, threshold, warn, peak=started)
        with self._cond:
            self._cell = self.last = cell
            self._ensure_thread()
            self._cond.notify_all()
        try:
            yield cell
        finally:
            self._disarm()

    def _disarm(self) -> None:
        # A stop sent a moment ago may land here, in the cell's thread: retry until the
        # watch is off, after which no stop is sent for this cell.
        while True:
            try:
                with self._cond:
                    self._cell = None
                return
            except BaseException:
                continue

    def close(self) -> None:
        """End the sampling thread (a later `watch()` starts a new one)."""
        with self._cond:
            self._closed = True
            self._cond.notify_all()
        thread, self._thread = self._thread, None
        if thread is not None and thread is not threading.current_thread():
            thread.join(timeout=1.0)
        with self._cond:
            self._closed = False

    def start(self) -> None:
        """Start the sampling thread unless it runs. Call it before a cell can be interrupted:
        CPython hands an interrupt sent to a thread that is starting another to the new
        thread, which dies before it reports started, and `Thread.start()` then never returns."""
        with self._cond:
            self._ensure_thread()

    def _ensure_thread(self) -> None:
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(
                target=self._run, name="cave-memory-watchdog", daemon=True
            )
            self._thread.start()

    def _run(self) -> None:
        while True:
            with self._cond:
                while self._cell is None and not self._closed:
                    self._cond.wait()  # no cell runs: sleep until one starts
                if self._closed:
                    return
            self._check()
            time.sleep(self.interval)

    def _check(self) -> None:
        used = self._sample()
        message: tuple[Callable[[str], None], str] | None = None
        with self._cond:  # the cell cannot end (nor the next begin) while we decide
            cell = self._cell
            if cell is None:
                return  # it ended while this sample was read: not one of its samples
            self.samples += 1
            cell.peak = max(cell.peak, used)
            now = time.monotonic()
            if cell.tripped_with is None:
                if used > cell.threshold and self._stop():
                    cell.tripped_with, cell._stopped_at = used, now
            elif now - cell._stopped_at >= self.grace:
                # Still running a grace after the stop: stuck in a C call (or the cell
                # caught the stop). Stop it again; say once that it cannot be stopped.
                if used > cell.threshold:
                    self._stop()
                    cell._stopped_at = now
                if not cell.warned and used > cell.tripped_with:
                    cell.warned = True
                    where = _running_line(cell.thread_id)
                    message = (cell.warn, cannot_stop_message(used, self.limit, where))
        if message is not None:
            warn, text = message
            try:
                warn(text)
            except Exception:  # a front end's listener failing must not end the watch
                pass


def _running_line(thread_id: int) -> str:
    """The cell line *thread_id* is running and the module it is in now ('' if unknown)."""
    frame: FrameType | None = sys._current_frames().get(thread_id)
    inner = frame.f_globals.get("__name__", "") if frame is not None else ""
    while frame is not None and not is_cell_file(frame.f_code.co_filename):
        frame = frame.f_back
    if frame is None:
        return ""
    line = linecache.getline(frame.f_code.co_filename, frame.f_lineno).strip()
    where = f"`{line}`, cell line {frame.f_lineno}" if line else f"cell line {frame.f_lineno}"
    if inner and inner != frame.f_globals.get("__name__"):
        where += f", inside {inner}"
    return where


def cannot_stop_message(used: int, limit: int, where: str = "") -> str:
    """What the user is told when a single C call keeps allocating past the limit."""
    call = f" ({where})" if where else ""
    return (
        f"The process holds {format_bytes(used)}, over the in-process memory limit of "
        f"{format_bytes(limit)}, and a single C call{call} is still allocating; the "
        "in-process runtime cannot stop it and the app may be killed by the operating "
        "system. Use the isolated kernel (the default; remove --in-process) to be protected."
    )


def stopped_message(
    cell: CellWatch, limit: int, removed: list[tuple[str, int]], now_used: int
) -> str:
    """The error text of a cell stopped at the memory limit (*removed*: the names it created,
    with their sizes, largest first)."""
    reached = max(cell.tripped_with or 0, cell.peak)
    over = f"over the in-process memory limit of {format_bytes(limit)}"
    if cell.threshold > limit:
        over += (
            f" (it started with {format_bytes(cell.started_with)} and was allowed "
            f"{format_bytes(cell.threshold - cell.started_with)} more)"
        )
    text = f"cave stopped this cell: the process reached {format_bytes(reached)}, {over}."
    if removed:
        names = ", ".join(f"{name} (~{format_bytes(size)})" for name, size in removed[:5])
        if len(removed) > 5:
            names += f" and {len(removed) - 5} more"
        text += f" To free memory, the names this cell created were removed: {names}."
    text += (
        f" The process now holds {format_bytes(now_used)}. Variables from earlier cells are "
        f"intact. {KERNEL_HINT}"
    )
    return text
