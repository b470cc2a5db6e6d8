"""Host-side work that may run model-written code (a `__getstate__`, a `__reduce__`), bounded.

`run_watched(fn, limit=…)` runs *fn* on a daemon thread. When it makes no progress for
*limit* seconds, `Overran` is raised inside that thread (Python delivers it at the next
bytecode, so a pure-Python loop stops, as a cell does on its timeout); if the thread still
runs after the grace period (a C call that does not return) it is left behind as a daemon
thread and the caller gets `TookTooLong` all the same. Either way the caller's wait ends,
and a daemon thread never keeps the process from exiting.
"""

from __future__ import annotations

import asyncio
import contextlib
import ctypes
import functools
import threading
import weakref
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")

GRACE = 2.0  # seconds an interrupted thread has to stop before it is left behind
_POLL = 0.05


class Overran(BaseException):
    """Raised inside a watched thread whose work went past its limit (a BaseException, so
    code that turns errors into other errors, `except Exception`, lets it through)."""


class TookTooLong(Exception):
    """The watched work made no progress for *limit* seconds and was stopped (*stopped*)
    or, stuck in native code, left running on its daemon thread."""

    def __init__(self, limit: float, *, stopped: bool) -> None:
        self.limit = limit
        self.stopped = stopped
        left = "stopped" if stopped else "abandoned (stuck in native code)"
        super().__init__(f"it took over {limit:g} s and was {left}")


class HungObjects:
    """Objects whose own code overran on the host (pickling one for a digest or a write):
    not run again while they live. Thread-safe."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._held: dict[int, Callable[[], Any]] = {}  # id -> weak reference (or a holder)

    def add(self, obj: Any) -> None:
        key = id(obj)
        ref: Callable[[], Any]
        try:
            ref = weakref.ref(obj, lambda _: self._forget(key))
        except TypeError:  # no weak reference to it: hold it (it is in the namespace anyway)
            ref = functools.partial(_identity, obj)
        with self._lock:
            self._held[key] = ref

    def _forget(self, key: int) -> None:
        with self._lock:
            self._held.pop(key, None)

    def __contains__(self, obj: Any) -> bool:
        with self._lock:
            ref = self._held.get(id(obj))
        return ref is not None and ref() is obj


def _identity(obj: Any) -> Any:
    return obj


HUNG = HungObjects()  # a write (dump, snapshot) stopped: the object is not written again
HUNG_DIGESTS = HungObjects()  # a digest stopped: no digest of it again (it is still written)


def set_async_exc(thread_id: int, exc: type[BaseException] | None) -> int:
    """Raise *exc* in the thread *thread_id* at its next bytecode (None: cancel a pending one)."""
    return ctypes.pythonapi.PyThreadState_SetAsyncExc(
        ctypes.c_ulong(thread_id), ctypes.py_object(exc) if exc is not None else None
    )


def _retrieved(fut: asyncio.Future[T]) -> None:
    if not fut.cancelled():
        fut.exception()


def _interrupt(thread: threading.Thread) -> None:
    if thread.is_alive() and thread.ident is not None:
        set_async_exc(thread.ident, Overran)


async def run_watched(
    fn: Callable[[], T],
    *,
    limit: float,
    progress: Callable[[], object] | None = None,
    grace: float = GRACE,
    name: str = "cave-watched",
) -> T:
    """*fn*() on a daemon thread, its result or its exception; `TookTooLong` when it went
    *limit* seconds without *progress* (a value that changes while the work advances; None:
    *limit* counts from the start). Cancelling the wait interrupts the thread too."""
    loop = asyncio.get_running_loop()
    done: asyncio.Future[T] = loop.create_future()
    done.add_done_callback(_retrieved)  # an outcome nobody waits for any more is no error

    def settle(ok: bool, value: object) -> None:
        if done.done():
            return
        if ok:
            done.set_result(value)  # type: ignore[arg-type]
        else:
            assert isinstance(value, BaseException)
            done.set_exception(value)

    def run() -> None:
        outcome: tuple[bool, object] | None = None
        try:
            try:
                outcome = (True, fn())
            except BaseException as exc:
                outcome = (False, exc)
            with contextlib.suppress(RuntimeError):  # the loop is closed: nobody waits
                loop.call_soon_threadsafe(settle, *outcome)
        except BaseException:  # an interrupt that came as the work ended
            if outcome is not None:
                with contextlib.suppress(RuntimeError):
                    loop.call_soon_threadsafe(settle, *outcome)

    thread = threading.Thread(target=run, name=name, daemon=True)
    thread.start()
    seen = progress() if progress is not None else None
    since = loop.time()
    try:
        while True:
            try:
                return await asyncio.wait_for(asyncio.shield(done), _POLL)
            except TimeoutError:
                pass
            now = loop.time()
            if progress is not None:
                current = progress()
                if current != seen:
                    seen, since = current, now
            if now - since >= limit:
                break
    except asyncio.CancelledError:
        _interrupt(thread)  # nobody waits for it any more: stop it
        raise
    deadline = loop.time() + grace
    while loop.time() < deadline:
        _interrupt(thread)
        try:
            return await asyncio.wait_for(asyncio.shield(done), _POLL)
        except TimeoutError:
            continue
        except Overran:
            raise TookTooLong(limit, stopped=True) from None
    raise TookTooLong(limit, stopped=False)
