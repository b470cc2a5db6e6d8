"""`ExitControl`: how the app leaves (Ctrl+Q, /quit, Ctrl+C twice, SIGTERM, SIGHUP).

Every way out runs the same path: the exit hooks (session closed, `--dump` written), then
the app exits. Quitting again while that saves leaves at once (`leave_now`); a failed
`--dump` is shown in red once and the app stays open, so nothing is lost.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from cave_tui.frontends.tui.host import CaveHost

DOUBLE_PRESS_SECONDS = 2.0
LEAVE_AFTER_SIGNAL = 10.0  # seconds a signalled app may take to restore the terminal


class ExitControl:
    """The app's quit keys and signals; one exit task at a time."""

    def __init__(self, app: CaveHost) -> None:
        self.app = app
        self._last_ctrl_c = -1e9
        self._quitting = False
        self._quit_task: asyncio.Future[None] | None = None
        self._signal_task: asyncio.Future[None] | None = None
        self._forced_quit = False  # a signal: leave whatever happens
        self._dump_warned = False  # a failed --dump was shown; the next quit leaves
        self._signals: list[int] = []

    def install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
                self._signals.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def remove_signal_handlers(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for sig in self._signals:
            loop.remove_signal_handler(sig)

    def _on_signal(self, sig: int) -> None:
        self.app.services.note_exit("terminated")
        self._forced_quit = True
        if self._quitting:  # signalled again while saving before exit: leave now
            name = signal.Signals(sig).name
            self.leave_now(f"cave got {name} while it was saving before exit", 128 + sig)
            return
        self._signal_task = asyncio.ensure_future(self._quit_on_signal(sig))

    async def _quit_on_signal(self, sig: int) -> None:
        """The exit path, then leave even if the terminal cannot be restored: after SIGHUP
        the terminal is gone and Textual's last writes to it would block for ever."""
        await self.quit()
        if self._quit_task is not None:
            await self._quit_task
        code = 128 + sig
        if sig == getattr(signal, "SIGHUP", None):
            os._exit(code)  # the exit hooks ran (session closed, dump written)
        # Any other signal: Textual restores the terminal; a wedged one cannot keep us.
        timer = threading.Timer(LEAVE_AFTER_SIGNAL, os._exit, args=(code,))
        timer.daemon = True
        timer.start()

    def interrupt(self) -> None:
        """Ctrl+C during a turn: cancel it; a second press within 2 s quits."""
        if self._ctrl_c_quits():
            return
        self.app.cancel_turn()
        self.app.notify("Interrupted. Press Ctrl+C again to quit.", timeout=DOUBLE_PRESS_SECONDS)

    def quit_twice(self) -> None:
        """Ctrl+C while idle: a second press within 2 s quits."""
        if not self._ctrl_c_quits():
            self.app.notify("Press Ctrl+C again to quit.", timeout=DOUBLE_PRESS_SECONDS)

    def _ctrl_c_quits(self) -> bool:
        """This Ctrl+C quits (the second within 2 s, or one while saving before exit);
        else it is noted as the first."""
        if self._quitting:
            self.leave_now("Ctrl+C was pressed while cave was saving before exit")
            return True
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_PRESS_SECONDS:
            self.request_quit()
            return True
        self._last_ctrl_c = now
        return False

    def request_quit(self) -> None:
        """Ctrl+Q and /quit: start the exit (the same path as SIGTERM, SIGHUP) and return.

        The exit runs as a task, so keys still work meanwhile: quitting again (Ctrl+Q,
        Ctrl+C, a signal) while it saves leaves at once (`leave_now`)."""
        if self._quitting:
            self.leave_now("Ctrl+Q was pressed again while cave was saving before exit")
            return
        self._quitting = True
        self._quit_task = asyncio.ensure_future(self._quit())

    async def quit(self) -> None:
        """Quit after the exit hooks ran: `request_quit`, then wait for the exit."""
        self.request_quit()
        if self._quit_task is not None:
            await asyncio.shield(self._quit_task)

    async def _quit(self) -> None:
        app = self.app
        if await self._dump_failed_before_quit():
            self._quitting = False
            return
        app.cancel_turn()
        app.notify("Saving before quitting. Press Ctrl+Q again to leave now, without it.")
        await app.services.shutdown()
        app.exit()

    def leave_now(self, reason: str, code: int = 130) -> None:
        """Leave without waiting for the exit to finish saving: the session record is closed
        at once and what was not written is said once the terminal is restored."""
        self.app.services.leave_now(reason, code)
        self.app.exit()

    async def _dump_failed_before_quit(self) -> bool:
        """Write `--dump DIR` before leaving; if that fails, say so in red and stay open
        (once), so nothing is lost: `/dump` elsewhere, or quit again to leave (exit 3)."""
        features = self.app.services.data_features
        if self._forced_quit or self._dump_warned or self.app.busy or features is None:
            return False
        if not features.dump_pending or await features.dump_now():
            return False
        self._dump_warned = True
        self.app.chat.add_notice(
            f"The {features.dump_failure()}. Quit again to leave without the dump "
            "(exit code 3), or `/dump DIR` somewhere else first.",
            "error",
        )
        return True
