"""The exit of a front-end session: exit hooks run once, however it quits (`/quit`, Ctrl+Q,
SIGTERM, SIGHUP, an unhandled error); a second quit request meanwhile (`leave_now`) stops
waiting for them, and the leave hooks close what must be closed at once. Never imports
Textual."""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import os
import signal
import sys
import threading
from collections.abc import Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from types import FrameType

from cave_tui.printable import printable

ExitHook = Callable[[], Awaitable[None] | None]
LeaveHook = Callable[[str], None]
SignalHandler = Callable[[int, FrameType | None], object] | int | None
STOP_BUDGET = 5.0  # seconds the runtime may take to stop at exit before it is left behind
LEAVE_GRACE = 5.0  # seconds after `leave_now` before the process ends whatever still runs


class Exits:
    """The exit hooks, the leave hooks and what the exit leaves to say (*notices*: where
    failed hooks are reported, shared with the session)."""

    def __init__(self, notices: list[str]) -> None:
        self.notices = notices
        self.exit_hooks: list[ExitHook] = []
        self.leave_hooks: list[LeaveHook] = []
        self.left: int | None = None  # the exit code once `leave_now` cut the exit short
        self.status: str | None = None  # "terminated", "crashed"… for the exit hooks
        self.messages: list[str] = []  # printed by the CLI once the front end closed
        self._exiting: asyncio.Future[None] | None = None
        self._shut_down = False

    def note_status(self, status: str) -> None:
        """Say how the session ends (*status*), unless that was said already."""
        self.status = self.status or status

    @property
    def shutting_down(self) -> bool:
        """The exit hooks were started (a later quit request should `leave_now`)."""
        return self._shut_down

    async def shutdown(
        self, stop_runtime: Callable[[], Awaitable[None]] | None, *, leave_on_signals: bool = False
    ) -> None:
        """Run the exit hooks (once, in order; failures are reported), then stop the runtime.

        With *leave_on_signals*, Ctrl+C (SIGINT), SIGTERM or SIGHUP while the hooks run
        call `leave_now` (front ends that read keys themselves call it on a second quit).
        """
        if self._shut_down:
            return
        self._shut_down = True
        if self.left is None:  # not when the user already asked to leave at once
            self._exiting = asyncio.ensure_future(self._run_exit_hooks())
        with self._leaving_on_signals(leave_on_signals and self._exiting is not None):
            while self._exiting is not None and not self._exiting.done():
                try:
                    await asyncio.shield(self._exiting)
                except asyncio.CancelledError:
                    # Only `leave_now` cuts the exit short: a cancellation left over from
                    # the signal that started it must not skip the dump and the close.
                    if self.left is not None:
                        break
        if stop_runtime is not None:
            try:  # a runtime that will not stop in time is left behind: the exit goes on
                await asyncio.wait_for(stop_runtime(), 1.0 if self.left else STOP_BUDGET)
            except Exception:
                pass

    async def _run_exit_hooks(self) -> None:
        for hook in list(self.exit_hooks):
            try:
                await _maybe_await(hook())
            except asyncio.CancelledError:
                if self.left is not None:  # `leave_now`: the leave hooks closed what must be
                    raise
                # Work the exit waited on was cancelled under it (the turn's, by the signal
                # that started the exit): the next hooks still run.
                self.notices.append("exit hook cancelled")
            except Exception as exc:
                self.notices.append(f"exit hook failed: {type(exc).__name__}: {exc}")

    def leave_now(self, reason: str, code: int) -> None:
        """Stop waiting for the exit hooks (a second quit request): the leave hooks close the
        session at once and say what was not written (*reason*: why); `left` becomes *code*.
        Safe to call from a signal handler on the loop, more than once."""
        if self.left is not None:
            return
        self.left = code
        self.note_status("terminated")
        for hook in list(self.leave_hooks):
            try:
                hook(reason)
            except Exception as exc:  # pragma: no cover - reported, never raised
                self.messages.append(f"cave: leave hook failed: {type(exc).__name__}: {exc}")
        if self._exiting is not None and not self._exiting.done():
            self._exiting.cancel()
        with contextlib.suppress(RuntimeError):  # no loop: nothing of it to leave behind
            # Worker threads stuck in native code are left behind: `asyncio.run` joins the
            # default executor's threads at its end, and would wait for them for ever.
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor())
        timer = threading.Timer(LEAVE_GRACE, self._leave_process, args=(code,))
        timer.daemon = True
        timer.start()

    def _leave_process(self, code: int) -> None:
        """The last resort after `leave_now`: the front end did not end within LEAVE_GRACE
        seconds (something still blocks): say what is unsaid and end the process."""
        with contextlib.suppress(Exception):
            for line in self.messages:  # they may name the kernel's variables
                sys.stderr.write(printable(line) + "\n")
            sys.stderr.flush()
            sys.stdout.flush()
        # The atexit functions (a terminal's settings put back…), for a second at most.
        last = threading.Thread(target=atexit._run_exitfuncs, daemon=True)
        last.start()
        last.join(1.0)
        os._exit(code)

    @contextlib.contextmanager
    def _leaving_on_signals(self, on: bool) -> Iterator[None]:
        """While the exit hooks run, SIGINT/SIGTERM/SIGHUP call `leave_now` (if *on*)."""
        loop = asyncio.get_running_loop()
        installed: list[tuple[int, SignalHandler]] = []
        for name, why in LEAVE_SIGNALS if on else ():
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            previous = signal.getsignal(sig)
            try:
                loop.add_signal_handler(sig, self.leave_now, why, 128 + sig)
            except (NotImplementedError, RuntimeError, ValueError):
                continue
            installed.append((sig, previous))
        try:
            yield
        finally:
            for sig, previous in installed:
                loop.remove_signal_handler(sig)
                if self.left is not None:  # leaving: a late signal must not raise instead
                    signal.signal(sig, signal.SIG_IGN)
                elif previous is not None:
                    signal.signal(sig, previous)


LEAVE_SIGNALS = (
    ("SIGINT", "Ctrl+C was pressed again while cave was saving before exit"),
    ("SIGTERM", "cave got SIGTERM while it was saving before exit"),
    ("SIGHUP", "the terminal closed while cave was saving before exit"),
)


async def _maybe_await(value: Awaitable[None] | None) -> None:
    if inspect.isawaitable(value):
        await value


class CancelOnSignals:
    """SIGTERM or SIGHUP cancels the running task, so its exit path runs; the same again
    while that exit still saves leaves at once (*leave_now*, exit 128+N). `received` holds
    the signals as they come; `remove()` takes the handlers off again."""

    SIGNALS = (signal.SIGTERM, signal.SIGHUP)

    def __init__(self, leave_now: Callable[[str, int], None]) -> None:
        self.received: list[int] = []
        self._leave_now = leave_now
        self._main = asyncio.current_task()
        self._loop = asyncio.get_running_loop()
        for sig in self.SIGNALS:
            self._loop.add_signal_handler(sig, self._on_signal, sig)

    def _on_signal(self, signum: int) -> None:
        if self.received:  # asked again while the exit still saves: leave now
            self._leave_now(f"cave got {signal.Signals(signum).name} again", 128 + signum)
        self.received.append(signum)
        if self._main is not None:
            self._main.cancel()

    def remove(self) -> None:
        for sig in self.SIGNALS:
            self._loop.remove_signal_handler(sig)
