"""`CliFrontEnd`: slash commands run by `cave run "/COMMAND …"`, with no one to ask.

Output goes to stdout (Markdown through Rich), errors and warnings to stderr; with
`--json` every line is an event on stdout instead. Questions are answered by `--yes`
(yes) or not at all (no). Work a command starts (a replay, a detail view) is awaited by
`drain()` before the run ends.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from typing import TYPE_CHECKING

from rich.console import Console
from rich.markdown import Markdown

from cave_tui.agent import events as ev
from cave_tui.app.commands.registry import Severity
from cave_tui.app.console_front_end import ConsoleFrontEnd
from cave_tui.app.console_progress import ConsoleProgress
from cave_tui.frontends.cli.json_events import write_line
from cave_tui.printable import plain_text, printable

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.app.services import AppServices
    from cave_tui.dataio.progress import Progress

QUIET_STYLES = ("", "info", "success", "dim")  # shown on stdout; the rest go to stderr


class CliFrontEnd(ConsoleFrontEnd):
    """`FrontEnd` for one command line run non-interactively."""

    replay_pause = 0.0  # nobody watches the steps go by

    def __init__(
        self,
        services: AppServices,
        *,
        as_json: bool = False,
        yes: bool = False,
        console: Console | None = None,
        errors: Console | None = None,
    ) -> None:
        super().__init__(services, console or Console(highlight=False))
        self.as_json = as_json
        self.yes = yes
        self.errors = errors or Console(stderr=True, highlight=False)
        self.progress_lines = ConsoleProgress(self.errors)  # stdout holds the results
        self.failed = False  # an error was printed

    def _event(self, event: ev.Event) -> None:
        write_line(event)

    def print(self, text: str, *, style: str = "") -> None:
        if style == "error":
            self.failed = True
        if self.as_json:
            if style == "error":
                self._event(ev.ErrorEvent(content=text, kind="command"))
            else:
                self._event(ev.NoticeEvent(content=text))
        elif style in QUIET_STYLES:
            self.console.print(Markdown(printable(text)))  # may hold names, reprs, files
        else:
            self.errors.print(plain_text(f"cave: {text}"))

    async def confirm(self, question: str) -> bool:
        answer = "yes (--yes)" if self.yes else "no (pass --yes to answer yes)"
        self.print(f"{question} → {answer}", style="dim")
        return self.yes

    def progress(self, progress: Progress, label: str) -> None:
        if not self.as_json:
            self.progress_lines.show(progress, label)

    def quit(self) -> None:
        pass  # the run ends after its one command anyway

    def clear(self) -> None:
        pass  # nothing is on a screen

    def set_theme(self, name: str) -> None:
        self.print("Themes are not available in `cave run`.", style="warning")

    def render(self, event: ev.Event) -> None:
        if self.as_json:
            self._event(event)
        else:
            super().render(event)

    def replay_events(self, events: AsyncIterable[ev.Event]) -> None:
        self.print("Replaying events is not available in `cave run`.", style="warning")

    def session_loaded(self, transcript: list[ev.Event]) -> None:
        for event in transcript:
            self.render(event)

    def notify(self, message: str, severity: Severity = "information") -> None:
        self.print(message, style="" if severity == "information" else "warning")
