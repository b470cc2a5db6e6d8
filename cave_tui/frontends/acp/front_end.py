"""`AcpFrontEnd`: what a slash command run over ACP prints and asks, for the agent to send.

A command's lines become the prompt's answer (agent message text); its yes/no questions go
to the client as permission requests (`ask`); a loaded session's events are kept for the
agent to replay as session updates. What only cave's own screens do is said to be
unavailable.
"""

from __future__ import annotations

from collections.abc import AsyncIterable, Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.commands.registry import Severity
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.dataio.progress import Progress

Ask = Callable[[str], Awaitable[bool]]  # a yes/no question put to the client
NOT_HERE = "not available over ACP"


async def _no(question: str) -> bool:
    return False


@dataclass
class AcpFrontEnd:
    """A `FrontEnd` that keeps a command's lines (printable text) and asks through *ask*."""

    ask: Ask = _no
    lines: list[str] = field(default_factory=list)
    loaded: list[ev.Event] | None = None  # `/load`'s transcript, to replay

    @property
    def text(self) -> str:
        return "\n".join(self.lines)

    def print(self, text: str, *, style: str = "") -> None:
        self.lines.append(printable(text))

    async def confirm(self, question: str) -> bool:
        return await self.ask(printable(question))

    def progress(self, progress: Progress, label: str) -> None:
        pass  # a command's progress is not reported over ACP

    def theme_names(self) -> list[str]:
        return []

    def current_theme(self) -> str:
        return ""

    def quit(self) -> None:
        self.print(f"{NOT_HERE}: the client ends cave acp")

    def clear(self) -> None:
        pass  # the client's view is the client's

    def set_theme(self, name: str) -> None:
        self.print(f"{NOT_HERE}: there are no themes")

    def insert(self, text: str, *, replace: bool = False) -> None:
        pass  # there is no input line of cave's

    def refresh_status(self) -> None:
        pass  # the agent sends the session's status after each prompt

    def show(self, name: str) -> None:
        self.print(f"{NOT_HERE}: ask for `/vars` or describe it in a prompt")

    def render(self, event: ev.Event) -> None:
        self.print(event.content)

    def replay_events(self, events: AsyncIterable[ev.Event]) -> None:
        self.print(f"{NOT_HERE}: replays are drawn by cave's own front ends")

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        self.print(f"{NOT_HERE}: replays are drawn by cave's own front ends")

    def session_loaded(self, transcript: list[ev.Event]) -> None:
        self.loaded = list(transcript)

    def notify(self, message: str, severity: Severity = "information") -> None:
        self.print(message)
