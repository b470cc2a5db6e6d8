"""`SentLines`: what a line sent from the input does, and when.

A `/command` runs through the shared registry, one after another in the order sent; a
`!` line runs as a cell; anything else is a task for the agent. A line sent while a turn,
a cell or a /command runs is queued and runs next, in order (told in the status line).
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual.worker import Worker

from cave_tui.app.commands import registry
from cave_tui.app.services import NO_MODEL_HELP

if TYPE_CHECKING:
    from cave_tui.frontends.tui.host import CaveHost


class SentLines:
    """Runs or queues the lines the user sends."""

    def __init__(self, app: CaveHost) -> None:
        self.app = app
        self.queued: list[str] = []  # lines sent while a turn ran: they run next, in order
        self._last_command: Worker[None] | None = None  # the latest /command's worker

    def submit(self, text: str) -> None:
        """A line sent from the input (Enter)."""
        app = self.app
        line = text.strip()
        if line.startswith("/"):
            app.history.add(text)
            self.run_command_line(line)
            return
        if app.busy or self.queued or self.command_running():
            # Sent while a turn or a cell runs (typed ahead, pasted), or after a /command that
            # has not finished (a /reset still asking): it runs next, in order, as sent.
            app.history.add(text)
            self.queue([text])
            return
        self.run(text)

    def queue(self, lines: list[str]) -> None:
        self.queued.extend(lines)
        self.app.status.queued = len(self.queued)  # told in the status line: no toast

    def command_running(self) -> bool:
        """True until the last /command sent has finished (they run one after another)."""
        last = self._last_command
        return last is not None and not last.is_finished

    def run_next(self) -> None:
        """Run the next queued line if nothing runs now (no turn, cell or /command)."""
        if self.queued and not self.app.busy and not self.command_running():
            line = self.queued.pop(0)
            self.app.status.queued = len(self.queued)
            self.run(line, queued=True)

    def run(self, text: str, *, queued: bool = False) -> None:
        """Run a task or a `!` cell now (the app is idle); a queued line was accepted already."""
        app = self.app
        line = text.strip()
        if line.startswith("!"):
            if not queued:
                app.history.add(text)
            app.run_python(line[1:].lstrip())
            return
        if app.services.model is None:
            app.chat.add_notice(NO_MODEL_HELP, "warning")
            if not app.prompt.text:  # not sent: the text goes back to the input
                app.prompt.set_text(text)
            return
        if not queued:
            app.history.add(text)
        app.start_turn(text)

    def run_command_line(self, line: str) -> None:
        """Run a `/command` line through the shared registry (in a worker: it may ask).

        Commands run one after another, in the order they were sent: `/retrieve x` then
        `/del x` typed fast must not delete `x` before it was saved.
        """
        app = self.app
        app.chat.add_notice(f"`{line}`", "command")
        previous = self._last_command

        async def run() -> None:
            if previous is not None:
                await asyncio.gather(previous.wait(), return_exceptions=True)
            await registry.dispatch(line, app.ctx)

        self._last_command = app.run_worker(run(), group="command")
