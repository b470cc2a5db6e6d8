"""`CliFrontEnd`: slash commands run by `cave run "/COMMAND …"`, with no one to ask.

Output goes to stdout (Markdown through Rich), errors and warnings to stderr; with
`--json` every line is an event on stdout instead. Questions are answered by `--yes`
(yes) or not at all (no). Work a command starts (a replay, a detail view) is awaited by
`drain()` before the run ends.
"""

from __future__ import annotations

import asyncio
import json
import sys
import time
from collections.abc import AsyncIterable, Coroutine
from pathlib import Path
from typing import TYPE_CHECKING, Any

from rich.console import Console
from rich.markdown import Markdown

from cave_tui.agent import events as ev
from cave_tui.agent.display import RichDisplay
from cave_tui.app.commands.data import progress_line
from cave_tui.app.commands.registry import Severity

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices
    from cave_tui.dataio.progress import Progress

QUIET_STYLES = ("", "info", "success", "dim")  # shown on stdout; the rest go to stderr


class CliFrontEnd:
    """`FrontEnd` for one command line run non-interactively."""

    def __init__(
        self,
        services: AppServices,
        *,
        as_json: bool = False,
        yes: bool = False,
        console: Console | None = None,
        errors: Console | None = None,
    ) -> None:
        self.services = services
        self.as_json = as_json
        self.yes = yes
        self.console = console or Console(highlight=False)
        self.errors = errors or Console(stderr=True, highlight=False)
        self.failed = False  # an error was printed
        self._work: list[asyncio.Task[Any]] = []
        self._last_progress = 0.0

    def _event(self, event: ev.Event) -> None:
        sys.stdout.write(json.dumps(event.to_dict(), default=str) + "\n")
        sys.stdout.flush()

    def print(self, text: str, *, style: str = "") -> None:
        if style == "error":
            self.failed = True
        if self.as_json:
            if style == "error":
                self._event(ev.ErrorEvent(content=text, kind="command"))
            else:
                self._event(ev.NoticeEvent(content=text))
        elif style in QUIET_STYLES:
            self.console.print(Markdown(text))
        else:
            self.errors.print(f"cave: {text}", markup=False)

    async def confirm(self, question: str) -> bool:
        answer = "yes (--yes)" if self.yes else "no (pass --yes to answer yes)"
        self.print(f"{question} → {answer}", style="dim")
        return self.yes

    def progress(self, progress: Progress, label: str) -> None:
        now = time.monotonic()
        if self.as_json or progress.elapsed < 1.0 or now - self._last_progress < 1.0:
            return
        self._last_progress = now
        self.errors.print(progress_line(progress, label), markup=False)

    def theme_names(self) -> list[str]:
        return []

    def current_theme(self) -> str:
        return ""

    def quit(self) -> None:
        pass  # the run ends after its one command anyway

    def clear(self) -> None:
        pass  # nothing is on a screen

    def set_theme(self, name: str) -> None:
        self.print("Themes are not available in `cave run`.", style="warning")

    def insert(self, text: str, *, replace: bool = False) -> None:
        pass  # there is no input line

    def refresh_status(self) -> None:
        pass  # there is no status line

    def show(self, name: str) -> None:
        self._start(self._show(name))

    def render(self, event: Any) -> None:
        if self.as_json:
            self._event(event)
        else:
            RichDisplay(self.console).render(event)

    def replay_events(self, events: AsyncIterable[Any]) -> None:
        self.print("Replaying events is not available in `cave run`.", style="warning")

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        self._start(self._replay(folder, speed, trust))

    def session_loaded(self, transcript: list[Any]) -> None:
        for event in transcript:
            self.render(event)

    def notify(self, message: str, severity: Severity = "information") -> None:
        self.print(message, style="" if severity == "information" else "warning")

    # -- work a command started ----------------------------------------------------------
    def _start(self, work: Coroutine[Any, Any, None]) -> None:
        self._work.append(asyncio.ensure_future(work))

    async def drain(self) -> None:
        """Wait for what the command started (its errors are printed, not raised)."""
        while self._work:
            await asyncio.gather(self._work.pop(0), return_exceptions=True)

    async def _show(self, name: str) -> None:
        try:
            detail = await self.services.runtime.detail(name)
        except KeyError as exc:
            self.print(str(exc).strip("'\""), style="error")
            return
        self.print(detail.to_markdown())

    async def _replay(self, folder: Path, speed: float, trust: bool) -> None:
        from cave_tui.session import replay_session

        try:
            result = await replay_session(
                folder,
                runtime=self.services.runtime,
                render=self.render,
                speed=speed,
                pause=0.0,
                trust=trust,
            )
        except Exception as exc:
            self.print(f"cannot replay {folder}: {exc}", style="error")
            return
        self.services.continue_from(result.agent)
        self.print(result.report(), style="success" if result.ok else "warning")
