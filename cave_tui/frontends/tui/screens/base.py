"""The look and the key rule shared by cave's modal screens (parsed when the first opens).

Key rule: a dialog never takes keys meant for the input. Text typed as it opens, or while
it is open, goes to the input below (in order with the keys before it); an answer key
counts only once the dialog has been open, with no typing, for `ANSWER_GRACE`.
"""

from __future__ import annotations

import asyncio
import time
from enum import Enum, auto
from typing import TypeVar

from textual import events
from textual.app import App
from textual.screen import ModalScreen, Screen

from cave_tui.frontends.tui.widgets.typed_text import TypedText

R = TypeVar("R")

ANSWER_GRACE = 0.5  # seconds of quiet (no typing, dialog open) before an answer key counts


class KeyRoute(Enum):
    """Where a key that reaches an open dialog goes."""

    DIALOG = auto()  # the dialog (or the app) handles it as usual
    INPUT = auto()  # typing: it goes to the input below the dialog
    DROP = auto()  # an answer key typed too soon to be an answer, and not text


def _now() -> float:
    # Textual stamps each event with `time.monotonic()` on POSIX (perf_counter on Windows).
    return time.monotonic()


class CaveModal(ModalScreen[R]):
    """Centred box over the dimmed app (the screen-level rules are in app.tcss)."""

    DEFAULT_CSS = """
    CaveModal {
        .modal-box {
            width: 80%;
            max-width: 120;
            height: auto;
            max-height: 90%;
            border: round $primary;
            background: $surface;
            padding: 1 2;
        }
        .modal-buttons {
            height: auto;
            margin: 1 0 0 0;
            align: center middle;
        }
        .modal-buttons Button {
            margin: 0 1;
        }
        .modal-title {
            text-style: bold;
            color: $text-primary;
            margin: 0 0 1 0;
        }
        .modal-hint {
            color: $text-muted;
            text-align: center;
        }
    }
    """

    def __init__(self) -> None:
        super().__init__()
        self._opened_at = _now()  # keys stamped earlier were typed before it existed
        self._typed_at = 0.0  # the last key this dialog sent to the input

    def answers_from(self, grace: float = ANSWER_GRACE) -> float:
        """From when (monotonic seconds) an answer key counts: *grace* after it opened or
        after the last key it sent to the input."""
        return max(self._opened_at, self._typed_at) + grace

    def route(self, event: events.Key | events.Paste, grace: float = ANSWER_GRACE) -> KeyRoute:
        """Where *event* goes: to this dialog, to the input below, or nowhere (too soon)."""
        focused = self.focused
        if isinstance(event, events.Paste):
            if focused is not None and focused.check_consume_key("a", "a"):
                return KeyRoute.DIALOG
            self._typed_at = max(self._typed_at, event.time)
            return KeyRoute.INPUT
        if focused is not None and focused.check_consume_key(event.key, event.character):
            return KeyRoute.DIALOG  # an editor in the dialog takes its own typing
        is_text = event.is_printable or event.key == "backspace"
        answer_now = event.time >= self.answers_from(grace)
        if is_text and not (answer_now and self._is_answer(event.key)):
            self._typed_at = max(self._typed_at, event.time)
            return KeyRoute.INPUT
        if not answer_now and self._is_answer(event.key):
            return KeyRoute.DROP
        return KeyRoute.DIALOG

    def _is_answer(self, key: str) -> bool:
        return any(key in bindings.key_to_bindings for _, bindings in self._modal_binding_chain)

    @staticmethod
    def typed(event: events.Key | events.Paste) -> TypedText:
        """What a key routed to the input does there."""
        if isinstance(event, events.Paste):
            return TypedText(event.text)
        if event.key == "backspace":
            return TypedText(erase=1)
        return TypedText(event.character or "")


async def ask_screen(app: App[None], screen: Screen[R]) -> R | None:
    """Push a modal *screen* and wait for its result (from any task, worker or not).

    If the waiting task is cancelled (the turn was interrupted), the screen is closed.
    """
    result: asyncio.Future[R | None] = asyncio.get_running_loop().create_future()

    def done(value: R | None) -> None:
        if not result.done():
            result.set_result(value)

    app.push_screen(screen, callback=done)
    try:
        return await result
    except asyncio.CancelledError:
        if screen.is_attached and app.screen is screen:
            app.pop_screen()
        raise
