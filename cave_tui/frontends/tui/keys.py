"""`OrderedKeys`: a focused widget handles its keys, and the bindings they trigger, in order.

Textual forwards each key to the focused widget's queue, but runs priority bindings at
once in the app and non-priority bindings only after the key has bubbled up to the app,
so without this a binding's key (Enter, Ctrl+J, Ctrl+F) could act before the characters
typed just before it had reached the widget.

A widget with this mixin runs a key's binding (its own, then its ancestors', keymap
applied, exactly as the app would) while it handles the key, so the action happens before
the next key is looked at. Keys that were queued for it after focus moved elsewhere (an
action that focuses another widget) go on to the newly focused widget, in order.

A widget that is no editor (the chat, the log, the inspector's table) hands text typed or
pasted there to the app's input (`TypingOwner`): the input takes the focus and the text,
and the keys queued after it follow it there. Enter on such a widget is its own (it opens
an inspector row) unless text was handed on from it since it last got the focus: then
that Enter ends the line being typed, and goes to the input too. No clock is involved.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Protocol, runtime_checkable

from textual import events
from textual.binding import Binding

if TYPE_CHECKING:
    from textual.widget import Widget

    _Base = Widget
else:
    _Base = object


NEWLINE_KEYS = ("ctrl+j", "alt+enter", "shift+enter")
"""Keys that add a line in an editor (in the input, Enter sends)."""

SCROLL_HINT = Binding("pagedown", "page_down", "Scroll", key_display="PgUp/PgDn ↑↓")
"""The key bar's hint while a scrolling pane (the chat, the log) has the focus."""


def is_text(event: events.Key | events.Paste) -> bool:
    """Whether *event* is text typed or pasted (a printable key or a paste)."""
    return isinstance(event, events.Paste) or event.is_printable


def takes_typing(widget: Widget | None) -> bool:
    """Whether *widget* is an editor that inserts typed text itself (an input, a filter)."""
    return widget is not None and widget.check_consume_key("a", "a")


def move_focus(widget: Widget) -> None:
    """Focus *widget* now (Widget.focus() defers it, and typed keys would overtake it)."""
    widget.screen.set_focus(widget)


@runtime_checkable
class TypingOwner(Protocol):
    """An app with one input, which takes the text typed where no editor has the focus."""

    def take_typing(self, widget: Widget, event: events.Key | events.Paste) -> bool:
        """Focus the input and give it *event*, which reached *widget*; say whether it did
        (False: *widget* is not on the input's screen)."""
        ...


class OrderedKeys(_Base):
    """Mixin for focusable widgets; put it before the widget class in the bases."""

    _handed_text = False  # text was handed to the input since this widget got the focus

    def _on_focus(self, event: events.Focus) -> None:
        # Textual calls each class's `_on_focus` in turn (Widget's too).
        self._handed_text = False

    def on_paste(self, event: events.Paste) -> None:
        # Named `on_`: Input's `_on_paste` is sync, TextArea's async; this runs before both.
        if self._hand_to_input(event):
            event.stop()
            event.prevent_default()

    def _hand_to_input(self, event: events.Key | events.Paste) -> bool:
        """Text that reached a widget that is no editor goes to the app's input, and so
        does the Enter that ends it (see the module's docstring)."""
        app = self.app
        if takes_typing(self) or not isinstance(app, TypingOwner):
            return False
        if is_text(event):
            handed = app.take_typing(self, event)
            self._handed_text = self._handed_text or handed
            return handed
        if isinstance(event, events.Key) and event.key == "enter" and self._handed_text:
            return app.take_typing(self, event)
        return False

    async def _on_key(self, event: events.Key) -> None:
        focused = self.app.focused
        if focused is not None and focused is not self and self.screen is focused.screen:
            if self in focused.ancestors:
                return  # bubbled up from the focused widget, which had its turn
            # Focus moved on (an earlier key's action) while this key waited in our queue.
            event.stop()
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))
            return
        if self._hand_to_input(event):
            event.stop()
            event.prevent_default()
            return
        if self.check_consume_key(event.key, event.character):
            return  # typed text: the widget's own handler inserts it
        # Private Textual API (pinned <9): the non-priority binding chain from the focused
        # widget up, as `App._on_key` runs it once the key has bubbled to the app.
        if await self.app._check_bindings(event.key):
            event.stop()
            event.prevent_default()
