"""`OrderedKeys`: a focused widget handles its keys, and the bindings they trigger, in order.

Textual forwards each key to the focused widget's queue, but runs priority bindings at
once in the app and non-priority bindings only after the key has bubbled up to the app,
so without this a binding's key (Enter, Ctrl+J, Ctrl+F) could act before the characters
typed just before it had reached the widget.

A widget with this mixin runs a key's binding (its own, then its ancestors', keymap
applied, exactly as the app would) while it handles the key, so the action happens before
the next key is looked at. Keys that were queued for it after focus moved elsewhere (an
action that focuses another widget) go on to the newly focused widget, in order.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events

if TYPE_CHECKING:
    from textual.widget import Widget

    _Base = Widget
else:
    _Base = object


def move_focus(widget: Widget) -> None:
    """Focus *widget* now (Widget.focus() defers it, and typed keys would overtake it)."""
    widget.screen.set_focus(widget)


class OrderedKeys(_Base):
    """Mixin for focusable widgets; put it before the widget class in the bases."""

    async def _on_key(self, event: events.Key) -> None:
        focused = self.app.focused
        if focused is not None and focused is not self and self.screen is focused.screen:
            # Focus moved on (an earlier key's action) while this key waited in our queue.
            event.stop()
            event.prevent_default()
            focused.post_message(events.Key(event.key, event.character))
            return
        if self.check_consume_key(event.key, event.character):
            return  # typed text: the widget's own handler inserts it
        # Private Textual API (pinned <9): the non-priority binding chain from the focused
        # widget up, as `App._on_key` runs it once the key has bubbled to the app.
        if await self.app._check_bindings(event.key):
            event.stop()
            event.prevent_default()
