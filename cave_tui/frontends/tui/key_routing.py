"""`KeyRouter`: where the app sends a key before Textual does (the key rule of screens/base.py).

Keys typed while the app starts are held, then given to the input in order; a dialog never
takes keys meant for the input; text typed where nothing has the focus, or in a pane that
is no editor (`keys.TypingOwner`), goes to the input, which takes the focus.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from textual import events

from cave_tui.frontends.tui.keys import is_text, move_focus
from cave_tui.frontends.tui.screens.base import CaveModal, KeyRoute
from cave_tui.frontends.tui.widgets.prompt import PromptInput

if TYPE_CHECKING:
    from textual.widget import Widget

    from cave_tui.frontends.tui.host import CaveHost


class KeyRouter:
    """Routes the app's keys and pastes; `consumed` says when Textual must not see one."""

    def __init__(self, app: CaveHost) -> None:
        self.app = app
        self.early: list[events.Key | events.Paste] | None = []  # None once the input has focus

    def consumed(self, event: events.Key | events.Paste) -> bool:
        """Handle *event* here (held, sent to the input, dropped): True; else Textual's."""
        if self.early is not None:
            # Before the input has the focus: held, else they went to the bare screen.
            self.early.append(event)
            return True
        if event.is_forwarded:
            return False
        app, prompt = self.app, self.app.prompt
        screen = app.screen_stack[-1] if app.screen_stack else None
        if isinstance(screen, CaveModal):
            route = screen.route(event, app.answer_grace)
            if route is KeyRoute.INPUT:
                prompt.post_message(PromptInput.Typed(screen.typed(event)))
                return True
            return route is KeyRoute.DROP
        if screen is prompt.screen and screen.focused is None and is_text(event):
            move_focus(prompt)
        return False

    def release_early(self) -> None:
        """The input has the focus: the keys held since the start go to it, in order."""
        early, self.early = self.early or [], None
        for event in early:
            if isinstance(event, events.Key) and event.key == "ctrl+j":
                # Typed before the terminal left cooked mode, Enter arrives as "\n" (ICRNL).
                event = events.Key("enter", "\r")
            self.app.prompt.post_message(event)

    def take_typing(self, widget: Widget, event: events.Key | events.Paste) -> bool:
        """Text typed in a pane (the chat, the log, the inspector's table) goes to the input,
        which takes the focus now, so the keys queued after it follow it (`keys.TypingOwner`)."""
        prompt = self.app.prompt
        if widget.screen is not prompt.screen:
            return False
        forwarded: events.Key | events.Paste = (
            events.Paste(event.text)
            if isinstance(event, events.Paste)
            else events.Key(event.key, event.character)
        )
        forwarded._set_forwarded()  # if it bubbles back up, the app must not route it again
        move_focus(prompt)
        prompt.post_message(forwarded)
        return True
