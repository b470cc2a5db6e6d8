"""`CaveHost`: what the app's parts (turns.py, sent_lines.py, exiting.py, ...) use of the app.

`CaveApp` (app.py) is this base filled in; the parts hold the app as a `CaveHost`, so they
never import app.py (which imports them): its widgets and services, and the few actions
the parts start. Each action's body is CaveApp's.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import App
from textual.reactive import var

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.app.commands import CommandContext
    from cave_tui.app.config import Config
    from cave_tui.app.history import InputHistory
    from cave_tui.app.services import AppServices
    from cave_tui.frontends.tui.widgets.chat import ChatPane
    from cave_tui.frontends.tui.widgets.load_progress import LoadBars
    from cave_tui.frontends.tui.widgets.prompt import PromptInput
    from cave_tui.frontends.tui.widgets.status import StatusLine


class CaveHost(App[None]):
    """The app as its parts see it (see `CaveApp` for what each member does)."""

    busy = var(False, bindings=True)  # a turn, a cell or a replay runs

    services: AppServices
    config: Config
    ctx: CommandContext
    history: InputHistory
    animate_ui: bool
    answer_grace: float  # a dialog's quiet time before an answer key counts
    # (session folder, speed, trust) replayed once the runtime is up (`cave demo`)
    startup_replay: tuple[Path, float, bool] | None
    startup_tasks: list[str]  # asked in order once the runtime is up (cave demo)
    chat: ChatPane
    loads: LoadBars  # a load's progress bars in the chat
    status: StatusLine
    prompt: PromptInput

    @property
    def in_app_thread(self) -> bool:
        raise NotImplementedError

    def start_turn(self, task: str) -> None:
        raise NotImplementedError

    def run_python(self, code: str) -> None:
        raise NotImplementedError

    def run_lines(self, lines: list[str]) -> None:
        """Run *lines* one after another, as if sent in order (the app is idle)."""
        raise NotImplementedError

    def replay(self, events: AsyncIterable[ev.Event]) -> None:
        raise NotImplementedError

    def replay_session(
        self, folder: Path | str, *, speed: float = 1.0, trust: bool = False
    ) -> None:
        raise NotImplementedError

    def render_event(self, event: ev.Event) -> None:
        raise NotImplementedError

    def draw_transcript(self, events: list[ev.Event]) -> None:
        raise NotImplementedError

    def refresh_inspector(self, changed: list[str] | None = None) -> None:
        raise NotImplementedError

    def open_detail(self, name: str) -> None:
        raise NotImplementedError

    def update_status(self) -> None:
        raise NotImplementedError

    def set_theme(self, name: str) -> None:
        raise NotImplementedError

    def cancel_turn(self) -> None:
        raise NotImplementedError

    def action_request_quit(self) -> None:
        raise NotImplementedError

    def action_clear(self) -> None:
        raise NotImplementedError
