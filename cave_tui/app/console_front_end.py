"""`ConsoleFrontEnd`: what the two line-based front ends (`--plain`, `cave run`) share.

They print to a Rich console, have no themes, input line or status line, and run the
work a command starts (a detail view, a replay) as tasks awaited by `drain()` before the
next prompt or the end of the run. Each subclass says how it prints and asks.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console

from cave_tui.agent.display import RichDisplay
from cave_tui.app.console_progress import ConsoleProgress

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.app.services import AppServices
    from cave_tui.dataio.progress import Progress


class ConsoleFrontEnd:
    """The shared half of a `FrontEnd` over a Rich console; subclasses add `print`,
    `confirm`, `quit`, `clear`, `set_theme`, `replay_events` and `notify`."""

    replay_pause: float | None = None  # seconds between replayed steps (None: the default)

    def __init__(self, services: AppServices, console: Console) -> None:
        self.services = services
        self.console = console
        self._tasks: list[asyncio.Future[Any]] = []
        self.progress_lines = ConsoleProgress(console)  # on a terminal only
        self._display = RichDisplay(console)  # for events met outside a turn's stream

    def print(self, text: str, *, style: str = "") -> None:
        raise NotImplementedError

    def progress(self, progress: Progress, label: str) -> None:
        """A Rich progress line on a terminal; nothing when the output is piped."""
        self.progress_lines.show(progress, label)

    def theme_names(self) -> list[str]:
        return []

    def current_theme(self) -> str:
        return ""

    def insert(self, text: str, *, replace: bool = False) -> None:
        pass  # there is no input line to put text in

    def refresh_status(self) -> None:
        pass  # there is no status line

    def render(self, event: ev.Event) -> None:
        """One whole event met outside a turn's stream (a loaded transcript, /compact):
        prose is printed at once, not held for the rest of a reply that is not coming."""
        self._display.render(event)
        self._display.flush()

    def show(self, name: str) -> None:
        self.start(self._show(name))

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        self.start(self._replay(folder, speed, trust))

    # -- work a command started ----------------------------------------------------------
    def start(self, work: Coroutine[object, object, None]) -> None:
        """Run *work* before the next prompt, or before the run ends (see `drain`)."""
        self._tasks.append(asyncio.ensure_future(work))

    async def drain(self) -> None:
        """Wait for what a command started (its errors are printed, not raised)."""
        while self._tasks:
            await asyncio.gather(self._tasks.pop(0), return_exceptions=True)
        self.progress_lines.stop()

    async def _show(self, name: str) -> None:
        try:
            detail = await self.services.live_runtime.detail(name)
        except KeyError as exc:
            self.print(str(exc).strip("'\""), style="error")
            return
        self.print(detail.to_markdown())

    async def _replay(self, folder: Path, speed: float, trust: bool) -> None:
        """Replay a session into this namespace, then go on live from it."""
        from cave_tui.session import replay_session

        try:
            await self.services.start()
            result = await replay_session(
                folder,
                runtime=self.services.runtime,
                render=self.render,
                speed=speed,
                pause=self.replay_pause,
                trust=trust,
            )
        except Exception as exc:
            self.print(f"cannot replay {folder}: {exc}", style="error")
            return
        self.services.continue_from(result.agent)
        self.print(result.report(), style="success" if result.ok else "warning")
