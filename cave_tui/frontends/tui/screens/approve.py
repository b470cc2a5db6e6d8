"""Approval mode: each code block is shown with Run / Edit / Skip before it runs."""

from __future__ import annotations

from textual import events, on
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.widgets import Button, Static, TextArea

from cave_tui.frontends.tui.keys import NEWLINE_KEYS, OrderedKeys
from cave_tui.frontends.tui.screens.base import CaveModal


class CodeEditor(OrderedKeys, TextArea):
    """The code, editable after Edit: Enter and the input's new-line keys (Ctrl+J, …) add a
    line; keys are taken in the order typed (`OrderedKeys`), as in the input."""

    def check_consume_key(self, key: str, character: str | None = None) -> bool:
        if not self.read_only and key in NEWLINE_KEYS:
            return True  # its own typing: never a dialog's answer key
        return super().check_consume_key(key, character)

    async def _on_key(self, event: events.Key) -> None:
        # Textual calls each class's `_on_key` in turn (TextArea's after this one).
        if not self.read_only and event.key in NEWLINE_KEYS:
            event.stop()
            event.prevent_default()  # TextArea's own handler knows only Enter
            start, end = self.selection
            self._replace_via_keyboard("\n", start, end)


class ApprovalScreen(CaveModal[str | None]):
    """Dismisses with the code to run (maybe edited) or None to skip it."""

    DEFAULT_CSS = """
    ApprovalScreen #approve-code { height: auto; max-height: 20; }
    """

    AUTO_FOCUS = "#run"  # applied when shown; an answer typed before that closes it safely

    BINDINGS = [
        Binding("ctrl+r", "run", "Run", priority=True),
        Binding("ctrl+e", "edit", "Edit", priority=True),
        Binding("escape", "skip", "Skip", priority=True),
    ]

    def __init__(self, code: str, step: int = 0) -> None:
        super().__init__()
        self.code = code
        self.step = step
        self.editing = False

    def compose(self) -> ComposeResult:
        with Vertical(id="approve-box", classes="modal-box"):
            title = f"Step {self.step}: run this code?" if self.step else "Run this code?"
            yield Static(title, id="approve-title", classes="modal-title", markup=False)
            editor = CodeEditor(
                self.code.rstrip("\n"), id="approve-code", read_only=True, soft_wrap=False
            )
            editor.cursor_blink = self.app.animation_level != "none"
            yield editor
            with Horizontal(classes="modal-buttons"):
                yield Button("Run", id="run", variant="success", compact=True)
                yield Button("Edit", id="edit", variant="primary", compact=True)
                yield Button("Skip", id="skip", variant="error", compact=True)
            hint = "Ctrl+R run · Ctrl+E edit · Esc skip"
            yield Static(hint, id="approve-hint", classes="modal-hint", markup=False)

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        {"run": self.action_run, "edit": self.action_edit, "skip": self.action_skip}[
            event.button.id or "skip"
        ]()

    def action_run(self) -> None:
        editors = self.query("#approve-code").results(TextArea)
        editor = next(editors, None)  # None: answered before it was shown, code unedited
        self.dismiss((editor.text if editor is not None else self.code.rstrip("\n")) + "\n")

    def action_edit(self) -> None:
        editor = next(self.query("#approve-code").results(TextArea), None)
        if editor is None:
            return  # not shown yet: nothing to edit
        editor.read_only = False
        self.editing = True
        self.query_one("#approve-title", Static).update("Edit the code, then Run (Ctrl+R)")
        editor.focus()

    def action_skip(self) -> None:
        self.dismiss(None)
