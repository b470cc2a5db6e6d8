"""A Yes/No question; the app's `CommandContext.confirm` awaits it."""

from __future__ import annotations

from textual import on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static

from cave_tui.frontends.tui.screens.base import CaveModal
from cave_tui.printable import plain_text


class ConfirmScreen(CaveModal[bool]):
    """Dismisses with True (Yes, `y`) or False (No, `n`, Esc)."""

    DEFAULT_CSS = """
    ConfirmScreen #confirm-box { width: 60; }
    """

    AUTO_FOCUS = "#no"  # applied when shown; an answer typed before that closes it safely

    BINDINGS = [
        # Priority: the app runs them as it reads each key, so what is typed just after
        # the answer goes to the screen below, not to this one as it closes.
        Binding("y", "answer(True)", "Yes", priority=True),
        Binding("n,escape", "answer(False)", "No", priority=True),
        Binding("left,right", "app.focus_next", show=False),
    ]

    def __init__(self, question: str) -> None:
        super().__init__()
        self.question = question

    def compose(self) -> ComposeResult:
        with Vertical(id="confirm-box", classes="modal-box"):
            yield Static(plain_text(self.question), id="confirm-question")  # may name files
            with Horizontal(classes="modal-buttons"):
                yield Button("Yes", id="yes", variant="primary", compact=True)
                yield Button("No", id="no", compact=True)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        self.dismiss(event.button.id == "yes")

    def action_answer(self, value: bool) -> None:
        self.dismiss(value)
