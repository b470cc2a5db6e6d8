"""The multi-line input: Enter sends, Ctrl+J (or Alt+Enter) adds a line, ↑/↓ walk the history,
and `/` opens slash-command completion with each command's one-line help.

Keys are handled in the order typed (`OrderedKeys`): a line pasted or typed fast and then
Enter is sent exactly as it arrived. Completion only ever completes on an explicit key:
Tab, or Enter after ↑/↓ picked an entry; Enter alone sends what was typed.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual import on
from textual.binding import Binding
from textual.containers import VerticalGroup
from textual.content import Content
from textual.message import Message
from textual.widgets import OptionList, TextArea
from textual.widgets.option_list import Option

from cave_tui.app.history import InputHistory
from cave_tui.frontends.tui.keys import NEWLINE_KEYS, OrderedKeys
from cave_tui.frontends.tui.widgets.typed_text import TypedText

if TYPE_CHECKING:
    from textual.app import ComposeResult

Completer = Callable[[str], list[tuple[str, str]]]


class Completions(OptionList, can_focus=False):
    """Matching slash commands, shown above the input while typing `/…`."""


class PromptInput(OrderedKeys, TextArea):
    """TextArea that sends on Enter and knows about history and completion."""

    BINDINGS = [
        Binding("enter", "submit", "Send", id="cave.send"),
        Binding(",".join(NEWLINE_KEYS), "newline", "New line", id="cave.newline"),
        # Tab never moves focus out of the input: what is typed next would be lost.
        Binding("tab", "complete", "Complete", show=False),
        Binding("escape", "dismiss", "Close", show=False),
        Binding("up", "up", show=False),
        Binding("down", "down", show=False),
    ]

    class Submitted(Message):
        def __init__(self, text: str) -> None:
            super().__init__()
            self.text = text

    class Typed(Message, bubble=False):
        """Keys an open dialog handed back to the input, in order with those typed before."""

        def __init__(self, typed: TypedText) -> None:
            super().__init__()
            self.typed = typed

    def __init__(self, *, history: InputHistory, completer: Completer, id: str | None = None):
        super().__init__(id=id, soft_wrap=True, show_line_numbers=False, compact=True)
        self.input_history = history
        self.completer = completer
        self.placeholder = "Ask cave… (/ for commands, ! runs Python, Ctrl+J new line)"
        self.picked = False  # ↑/↓ chose a completion: Enter takes it

    @property
    def completions(self) -> Completions:
        """The list above the input, in the PromptArea this input is mounted in."""
        if self.parent is None:
            raise RuntimeError("the prompt input has no completions until it is mounted")
        return self.parent.query_one(Completions)

    @property
    def completing(self) -> bool:
        return bool(self.parent) and self.completions.display

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "dismiss":
            return self.completing
        return True

    # -- completion --------------------------------------------------------------------
    @on(TextArea.Changed)
    def _update_completions(self) -> None:
        self.picked = False
        text = self.text
        matches: list[tuple[str, str]] = []
        if text.startswith("/") and " " not in text and "\n" not in text:
            matches = self.completer(text)
            if len(matches) == 1 and matches[0][0] == text:
                matches = []
        completions = self.completions
        if matches:
            completions.set_options(
                Option(
                    Content.assemble((name, "$text-success"), "  ", (help_, "dim")),
                    id=name,
                )
                for name, help_ in matches
            )
            completions.highlighted = 0
            completions.display = True
            self.suggestion = matches[0][0][len(text) :]
        else:
            completions.display = False
            self.suggestion = ""
        self.refresh_bindings()

    def _accept_completion(self) -> bool:
        completions = self.completions
        option = completions.highlighted_option if completions.display else None
        if option is None or option.id is None:
            return False
        self.text = option.id + " "
        self.move_cursor(self.document.end)
        completions.display = False
        self.suggestion = ""
        return True

    def action_complete(self) -> None:
        """Complete the highlighted command; with nothing to complete, Tab does nothing."""
        if self.completing:
            self._accept_completion()

    def action_dismiss(self) -> None:
        self.completions.display = False
        self.suggestion = ""
        self.refresh_bindings()

    # -- sending, lines, history -----------------------------------------------------------
    def action_submit(self) -> None:
        if self.completing and self.picked:
            option = self.completions.highlighted_option
            if option is not None and option.id != self.text.strip():
                self._accept_completion()
                return
        text = self.text
        if not text.strip():
            return
        # Cleared here, not when the app handles the message: keys typed right after Enter
        # are already queued for this input and belong to the next line.
        self.post_message(self.Submitted(text))
        self.clear()

    def on_prompt_input_typed(self, message: Typed) -> None:
        for _ in range(message.typed.erase):
            self.action_delete_left()
        if message.typed.text:
            self.insert(message.typed.text)

    def action_newline(self) -> None:
        self.insert("\n")

    def set_text(self, text: str) -> None:
        self.text = text
        self.move_cursor(self.document.end)

    def insert_text(self, text: str) -> None:
        """Insert at the cursor (the inspector's "insert name" action)."""
        self.insert(text)
        self.focus()

    def action_up(self) -> None:
        if self.completing:
            self.completions.action_cursor_up()
            self.picked = True
            return
        if self.cursor_location[0] == 0:
            entry = self.input_history.previous(self.text)
            if entry is not None:
                self.text = entry
                # End of the first line: the next ↑ goes on through the history.
                self.move_cursor((0, len(self.document.get_line(0))))
            return
        self.action_cursor_up()

    def action_down(self) -> None:
        if self.completing:
            self.completions.action_cursor_down()
            self.picked = True
            return
        if self.cursor_location[0] >= self.document.line_count - 1:
            entry = self.input_history.next()
            if entry is not None:
                self.set_text(entry)
            return
        self.action_cursor_down()


class PromptArea(VerticalGroup):
    """Completions list above the input."""

    def __init__(self, *, history: InputHistory, completer: Completer) -> None:
        super().__init__(id="prompt-area")
        self.input = PromptInput(history=history, completer=completer, id="prompt")
        self.completions = Completions(id="completions")
        self.completions.display = False

    def compose(self) -> ComposeResult:
        yield self.completions
        yield self.input

    @on(OptionList.OptionSelected, "#completions")
    def _clicked(self, event: OptionList.OptionSelected) -> None:
        event.stop()
        self.completions.highlighted = event.option_index
        self.input._accept_completion()
        self.input.focus()
