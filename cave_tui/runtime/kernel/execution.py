"""Running one cell in the kernel: send it, follow it to a `CellOutcome`, make the result.

A timeout or a user's interrupt first interrupts the kernel; a cell still running after the
grace period is killed with its kernel when the kind allows (KILLED), else reported STUCK.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from typing import TYPE_CHECKING, Any

from cave_tui.runtime.base import ExecutionResult, NamespaceChange, OutputListener
from cave_tui.runtime.kernel.cell import CellOutcome, CellRun
from cave_tui.runtime.kernel.checkpoint import names_bound_by
from cave_tui.runtime.kernel.supervisor import ANSI, KernelSupervisor
from cave_tui.runtime.memory import format_bytes

if TYPE_CHECKING:
    from cave_tui.runtime.kernel.namespace import NamespaceQueries


class CellExecutor:
    """Runs cells one at a time under the supervisor's lock; remembers the last outcome."""

    def __init__(self, sup: KernelSupervisor, namespace: NamespaceQueries) -> None:
        self._sup = sup
        self._namespace = namespace
        self.last_outcome: CellOutcome | None = None
        self._width_set: tuple[object, int] | None = None  # (the channel, the width) last sent

    async def execute(
        self,
        code: str,
        timeout: float | None,
        on_output: OutputListener | None = None,
        *,
        width: int | None = None,
    ) -> ExecutionResult:
        """Run *code*; frames print *width* columns wide (None: as the kernel last did)."""
        result = await self._execute(code, timeout, on_output, width)
        result.display_width = width
        return result

    async def _set_width(self, width: int | None) -> None:
        """Send *width* to the kernel unless this kernel already has it (a restarted kernel
        starts at the default again: a new channel). An older kernel agent keeps its width."""
        chan = self._sup.chan
        if width is None or chan is None or self._width_set == (chan, width):
            return
        reply = await self._sup.request(
            "display_width", {"width": width}, what="setting the display width"
        )
        if reply["data"].get("ok"):
            self._width_set = (chan, width)

    async def _execute(
        self,
        code: str,
        timeout: float | None,
        on_output: OutputListener | None,
        width: int | None,
    ) -> ExecutionResult:
        sup = self._sup
        async with sup.lock:
            self.last_outcome = None
            try:
                await sup.ensure_kernel()
            except Exception as exc:
                return ExecutionResult(
                    success=False,
                    error=f"the kernel is not available: {exc}",
                    error_type="KernelUnavailable",
                    notice=sup.take_notices(),
                )
            await sup.settle()
            await self._set_width(width)
            cell = CellRun(sup.settings.output_limit, asyncio.get_running_loop(), on_output)
            cell.code = code
            chan = sup.chan
            assert chan is not None
            content = {
                "code": code,
                "silent": False,
                "store_history": False,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": False,
            }
            try:
                msg_id, reply = await chan.send(
                    chan.shell, "execute_request", content, on_iopub=cell.on_iopub
                )
            except ConnectionError:  # it died between the check and the send
                return await self._finish(cell, self._gone(cell), timeout)
            assert reply is not None
            cell.set_reply(reply)
            sup.cell = cell
            try:
                outcome = await self._wait(cell, timeout)
            except asyncio.CancelledError:
                await asyncio.shield(self._stop_cancelled(cell))
                raise
            finally:
                sup.cell = None
                chan.forget(msg_id)
            return await self._finish(cell, outcome, timeout)

    async def interrupt(self) -> None:
        """The user's interrupt: KeyboardInterrupt now, a kill after the grace period."""
        cell = self._sup.cell
        if cell is None:
            return
        cell.user_interrupt = True
        await self._sup.kind.interrupt(self._sup.chan)
        if cell.escalate_at is None:
            cell.escalate_at = time.monotonic() + self._sup.settings.interrupt_grace
        cell.poke()

    # -- following the cell --------------------------------------------------------------------
    async def _wait(self, cell: CellRun, timeout: float | None) -> CellOutcome:
        """How the cell ended (DONE, STUCK, or the kernel gone: see `_gone`); escalates
        timeouts and interrupts on the way."""
        sup = self._sup
        died = sup.died()
        deadline = cell.started + timeout if timeout else None
        while True:
            if cell.done:
                return CellOutcome.DONE
            if died.done():
                return self._gone(cell)
            if cell.reply_failed:
                # The channel failed the reply: the kernel is going; wait for the proof.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(died), 5)
                return self._gone(cell)
            now = time.monotonic()
            if cell.escalate_at is not None and now >= cell.escalate_at:
                cell.killed = sup.kind.kill()  # the interrupt did not stop it in time
                if not cell.killed:
                    return CellOutcome.STUCK  # not cave's to kill
                cell.escalate_at = None
            elif deadline is not None and now >= deadline and not cell.timed_out:
                cell.timed_out = True
                await sup.kind.interrupt(sup.chan)
                cell.escalate_at = now + sup.settings.interrupt_grace
            if cell.poked.done():
                cell.poked = cell.loop.create_future()
            wake = [t for t in (deadline, cell.escalate_at) if t is not None]
            delay = max(min(wake) - time.monotonic(), 0) if wake else None
            waiting: list[asyncio.Future[Any]] = [cell.finished, died, cell.poked]
            await asyncio.wait(waiting, timeout=delay, return_when=asyncio.FIRST_COMPLETED)

    def _gone(self, cell: CellRun) -> CellOutcome:
        """The outcome of a cell whose kernel went away."""
        if self._sup.stopping:
            return CellOutcome.STOPPED
        if cell.killed:
            return CellOutcome.KILLED
        return self._sup.kind.lost_outcome

    async def _stop_cancelled(self, cell: CellRun) -> None:
        """The caller gave up on the cell: interrupt it, and kill it if it will not stop."""
        sup = self._sup
        await sup.kind.interrupt(sup.chan)
        died = sup.died()
        deadline = time.monotonic() + sup.settings.interrupt_grace
        while not cell.done and not died.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        report = cell.final_report() if cell.done else {}
        if report:
            sup.store.apply_cell(
                report.get("names"),
                list(report.get("deleted", [])),
                [str(n) for n in report.get("changed", [])],
            )
        else:
            sup.store.note_unreported(names_bound_by(cell.code))
        if not cell.done and not died.done():
            cell.killed = sup.kind.kill()
            if cell.killed:
                with contextlib.suppress(Exception):
                    sup.notices.append(
                        await sup.restart("was killed because a cancelled cell would not stop")
                    )
        sup.on_change(NamespaceChange(everything=True))  # what ran before the stop

    # -- the result ------------------------------------------------------------------------------
    async def _finish(
        self, cell: CellRun, outcome: CellOutcome, timeout: float | None
    ) -> ExecutionResult:
        self.last_outcome = outcome
        duration = time.monotonic() - cell.started
        result = ExecutionResult(success=False, output=cell.capture.getvalue(), duration=duration)
        result.output_truncated_chars = cell.capture.dropped
        result.figures, result.figures_dropped = cell.figures.kept, cell.figures.dropped
        result.figure_notes = cell.figures.notes
        if outcome is CellOutcome.STOPPED:
            result.error = "the runtime was stopped while this cell ran"
            result.error_type = "Stopped"
            return result
        if outcome is CellOutcome.DONE:
            self._done_result(cell, result, timeout)
        elif outcome is CellOutcome.LOST:
            result.error = "the attached kernel stopped answering while running this cell"
            result.error_type = "KernelDied"
            result.interrupted = True
        elif outcome is CellOutcome.STUCK:
            result.error = (
                "the cell did not stop on interrupt and cave cannot kill an attached kernel; "
                "it stays busy until the cell returns."
            )
            result.error_type = "Timeout" if cell.timed_out else "Interrupted"
            result.timed_out = cell.timed_out
            result.interrupted = True
        else:
            await self._died_result(cell, outcome, result, timeout)
        result.notice = self._sup.take_notices()
        return result

    async def _died_result(
        self, cell: CellRun, outcome: CellOutcome, result: ExecutionResult, timeout: float | None
    ) -> None:
        """DIED or KILLED: say how the kernel went, then restart it (naming as lost what
        the cell's code binds, unless the checkpoint brings it back)."""
        sup = self._sup
        sup.store.note_unreported(names_bound_by(cell.code))
        died = sup.died()
        info = died.result() if died.done() else None
        reason = info.describe() if info is not None else "died"
        if outcome is CellOutcome.KILLED and cell.timed_out:
            result.error = (
                f"cell timed out after {timeout:g}s; the interrupt did not stop it "
                "(stuck in native code?), so the kernel was killed and restarted."
            )
            result.error_type = "Timeout"
            result.timed_out = result.interrupted = True
            reason = "was killed after the cell timed out and ignored the interrupt"
        elif outcome is CellOutcome.KILLED:
            result.error = (
                "the cell did not stop on interrupt; the kernel was killed and restarted."
            )
            result.error_type = "Interrupted"
            result.interrupted = True
            reason = "was killed because the cell ignored the interrupt"
        else:
            fatal = info.fatal_lines() if info is not None else ""
            result.error = f"The kernel {reason} while running this cell." + (
                f"\n{fatal}" if fatal else ""
            )
            result.error_type = "KernelDied"
            result.interrupted = True  # the death cut the cell short
            if info is not None and info.oom_killed:
                result.error_type = "MemoryError"
        try:
            sup.notices.append(await sup.restart(reason))
        except Exception as exc:
            sup.notices.append(f"The kernel could not be restarted: {exc}")

    def _done_result(self, cell: CellRun, result: ExecutionResult, timeout: float | None) -> None:
        """DONE: the kernel's reply and cell report make the result."""
        sup = self._sup
        reply = cell.reply.result().get("content", {}) if cell.reply is not None else {}
        report = cell.final_report()
        if isinstance(report.get("result"), str):  # the last value, sent in the report
            cell.capture.write(report["result"] + "\n")
            result.output = cell.capture.getvalue()
            result.output_truncated_chars = cell.capture.dropped
        result.success = reply.get("status") == "ok"
        if isinstance(report.get("result_frame"), str):  # the table view opens it by this
            result.result_frame = report["result_frame"]
        result.changed = [str(n) for n in report.get("changed", [])]
        result.deleted = [str(n) for n in report.get("deleted", [])]
        if isinstance(report.get("duration"), int | float):
            result.duration = float(report["duration"])
        dropped = report.get("dropped")
        if isinstance(dropped, int) and dropped > 0:
            result.output_truncated_chars += dropped
        if not result.success:
            result.error_type = str(report.get("error_type") or reply.get("ename") or "Error")
            result.error = str(report.get("error") or _reply_error(reply, cell.error_msg))
            result.interrupted = result.error_type == "KeyboardInterrupt"
            memory_limit = sup.settings.memory_limit
            if "memory" in report and memory_limit:
                rss = (report["memory"] or {}).get("rss")
                if isinstance(rss, int):
                    sup.notices.append(
                        "The cell ran out of memory at the kernel's memory limit "
                        f"({format_bytes(memory_limit)}); the app and the namespace are "
                        f"intact, nothing was lost. The kernel holds {format_bytes(rss)} "
                        "now; delete large variables (del x) to free more."
                    )
        if cell.timed_out and not result.success:
            result.timed_out = result.interrupted = True
            result.error = f"cell timed out after {timeout:g}s and was stopped (KeyboardInterrupt)."
            result.error_type = "Timeout"
        elif cell.user_interrupt and result.interrupted:
            result.error_type = "KeyboardInterrupt"
        sup.store.apply_cell(
            report.get("names") if report else None, result.deleted, result.changed
        )
        if not report or "broken" in report:  # what the cell bound is not known: its code says
            sup.store.note_unreported(names_bound_by(cell.code))
        self._namespace.rebound(result.changed + result.deleted)
        changed = [n for n in result.changed if n not in result.deleted]
        if changed and sup.store.budget > 0 and report:
            sup.checkpoint_soon(changed)


def _reply_error(reply: dict[str, Any], error_msg: dict[str, Any] | None) -> str:
    source = error_msg or reply
    lines = [ANSI.sub("", str(x)) for x in source.get("traceback", [])]
    tail = "\n".join(lines[-3:]).strip()
    head = f"{source.get('ename', 'Error')}: {source.get('evalue', '')}"
    return tail if tail.endswith(head) else f"{tail}\n{head}".strip()
