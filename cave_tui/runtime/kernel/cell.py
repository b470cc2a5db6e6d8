"""One execute request as the host follows it: output, report, and how it ended."""

from __future__ import annotations

import asyncio
import enum
import time
from collections.abc import Callable
from typing import Any

from cave_tui.runtime.capture import OutputCapture
from cave_tui.runtime.figures import Figures
from cave_tui.runtime.shipped.figure_render import NOTE_MIME


class CellOutcome(enum.Enum):
    """How a cell ended, as the host saw it; each becomes its own kind of `ExecutionResult`."""

    DONE = "done"  # the kernel replied and went idle (the cell itself may have raised)
    DIED = "died"  # the kernel cave launched died while the cell ran; it is restarted
    KILLED = "killed"  # the cell ignored the interrupt, so cave killed its kernel; restarted
    STUCK = "stuck"  # the cell ignored the interrupt and the kernel is not cave's to kill
    LOST = "lost"  # the attached kernel stopped answering while the cell ran
    STOPPED = "stopped"  # the runtime was stopped while the cell ran


class CellRun:
    """One execute request: its output, its report, and when it is finished."""

    def __init__(
        self,
        limit: int,
        loop: asyncio.AbstractEventLoop,
        on_output: Callable[[str], Any] | None = None,
    ) -> None:
        self.loop = loop
        self.code = ""  # the cell's code (what it binds is lost if it ends without a report)
        self.capture = OutputCapture(limit, on_write=on_output)  # streamed as it comes
        self.figures = Figures()  # the PNGs it displayed (checked, bounded)
        self.report: dict[str, Any] | None = None
        self.error_msg: dict[str, Any] | None = None
        self.reply: asyncio.Future[dict[str, Any]] | None = None
        self.finished: asyncio.Future[None] = loop.create_future()  # reply and idle seen
        self.poked: asyncio.Future[None] = loop.create_future()
        self.started = time.monotonic()
        self.timed_out = False
        self.user_interrupt = False
        self.escalate_at: float | None = None
        self.killed = False
        self._idle = False

    def set_reply(self, fut: asyncio.Future[dict[str, Any]]) -> None:
        self.reply = fut
        fut.add_done_callback(lambda _: self._check())

    def final_report(self) -> dict[str, Any]:
        """The kernel's cell report: in the reply's metadata, or on the comm (fallback)."""
        if self.done:
            report = (self.reply.result().get("metadata") or {}).get("cave")  # type: ignore[union-attr]
            if isinstance(report, dict):
                return report
        return self.report or {}

    @property
    def reply_failed(self) -> bool:
        reply = self.reply
        return (
            reply is not None
            and reply.done()
            and (reply.cancelled() or reply.exception() is not None)
        )

    def _check(self) -> None:
        if (self.done or self.reply_failed) and not self.finished.done():
            self.finished.set_result(None)

    def poke(self) -> None:
        if not self.poked.done():
            self.poked.set_result(None)

    def on_iopub(self, msg: dict[str, Any]) -> None:
        kind = msg["msg_type"]
        content = msg["content"]
        if kind == "stream":
            self.capture.write(str(content.get("text", "")))
        elif kind in ("execute_result", "display_data"):
            data = content.get("data") or {}
            if not isinstance(data, dict):
                return
            text = data.get("text/plain")
            if text:
                self.capture.write(f"{text}\n")
            if "image/png" in data:
                self.figures.add_base64(data["image/png"], data.get(NOTE_MIME))
        elif kind == "error":
            self.error_msg = content
        elif kind == "comm_msg":
            data = content.get("data") or {}
            if data.get("op") == "cell":
                self.report = data
        elif kind == "status" and content.get("execution_state") == "idle":
            self._idle = True
            self._check()

    @property
    def done(self) -> bool:
        """Reply and idle both in (a reply failed by a dying channel is not done)."""
        reply = self.reply
        return (
            self._idle
            and reply is not None
            and reply.done()
            and not reply.cancelled()
            and reply.exception() is None
        )
