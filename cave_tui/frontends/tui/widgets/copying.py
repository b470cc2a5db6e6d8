"""`Copyable`: a cell, an output or an answer that copies itself to the clipboard with one key.

Focused (Tab/Shift+Tab, or a click), Ctrl+Y copies what the widget holds as plain text
through the terminal's OSC 52 sequence (`App.copy_to_clipboard`), so it works over SSH and
in tmux, and a note says what was copied. Ctrl+Y is the input's redo only while the input
has the focus, so it never clashes there; plain letters typed in a pane go to the input.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual.binding import Binding

from cave_tui.frontends.tui.keys import OrderedKeys

if TYPE_CHECKING:
    from textual.widget import Widget

    _Base = Widget
else:
    _Base = object

COPY_BINDING = Binding("ctrl+y", "copy", "Copy", key_display="^y", id="cave.copy")
"""Textual reads the bindings of widget classes only: each copyable class lists this one."""


class Copyable(OrderedKeys, _Base):
    """Mixin for focusable widgets with text to copy; put it before the widget class, and
    `COPY_BINDING` in the class's `BINDINGS`."""

    def copy_text(self) -> str:
        """What Ctrl+Y copies (plain text)."""
        raise NotImplementedError

    def copy_label(self) -> str:
        """What it is, for the note: "the code of step 2"."""
        raise NotImplementedError

    def action_copy(self) -> None:
        text = self.copy_text()
        lines = text.count("\n") + 1 if text else 0
        self.app.copy_to_clipboard(text)
        self.app.notify(
            f"Copied {self.copy_label()} ({lines:,} line{'s' if lines != 1 else ''}, "
            f"{len(text):,} characters) to the clipboard.",
            markup=False,
            timeout=3,
        )


def step_label(step: int, agent: str | None) -> str:
    """ "step 2", "step 2 of analyst", "your cell" for a cell the user ran."""
    if agent == "user":
        return "your cell"
    return f"step {step}" + (f" of {agent}" if agent else "")
