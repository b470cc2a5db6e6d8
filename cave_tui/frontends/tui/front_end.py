"""`TuiFrontEnd`: what commands ask of the app (`CommandContext.ui`), one method per action."""

from __future__ import annotations

from collections.abc import AsyncIterable
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.commands.registry import Severity
from cave_tui.frontends.tui.messages import ChatNotice, LoadProgress
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.dataio.progress import Progress
    from cave_tui.frontends.tui.host import CaveHost


class TuiFrontEnd:
    """`FrontEnd` for the app: what commands ask of it, one method per action.

    `print` and `progress` may be called from any thread (a loader reports progress from its
    worker thread): off the app's thread they only post a message.
    """

    def __init__(self, app: CaveHost) -> None:
        self.app = app

    def print(self, text: str, *, style: str = "") -> None:
        if self.app.in_app_thread:
            self.app.chat.add_notice(text, style or "info")
        else:
            self.app.post_message(ChatNotice(text, style or "info"))

    async def confirm(self, question: str) -> bool:
        from cave_tui.frontends.tui.screens.base import ask_screen
        from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

        answer: bool | None = await ask_screen(self.app, ConfirmScreen(question))
        return answer is True

    def progress(self, progress: Progress, label: str) -> None:
        self.app.post_message(LoadProgress(progress, label))

    def theme_names(self) -> list[str]:
        return sorted(self.app.available_themes)

    def current_theme(self) -> str:
        return self.app.theme

    def quit(self) -> None:
        self.app.call_later(self.app.action_request_quit)

    def clear(self) -> None:
        self.app.action_clear()

    def set_theme(self, name: str) -> None:
        self.app.set_theme(name)

    def insert(self, text: str, *, replace: bool = False) -> None:
        if replace:
            self.app.prompt.set_text(text)
            self.app.prompt.focus()
        else:
            self.app.prompt.insert_text(text)

    def refresh_status(self) -> None:
        self.app.update_status()

    def show(self, name: str) -> None:
        self.app.open_detail(name)

    def render(self, event: ev.Event) -> None:
        self.app.render_event(event)

    def replay_events(self, events: AsyncIterable[ev.Event]) -> None:
        self.app.replay(events)

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        self.app.replay_session(folder, speed=speed, trust=trust)

    def session_loaded(self, transcript: list[ev.Event]) -> None:
        # The inspector follows the runtime's own change reports.
        self.app.action_clear()
        self.app.draw_transcript(transcript)
        self.app.update_status()

    def notify(self, message: str, severity: Severity = "information") -> None:
        self.app.notify(printable(message), severity=severity, markup=False)  # names, errors
