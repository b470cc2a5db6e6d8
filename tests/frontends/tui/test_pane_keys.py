"""Keys in the panes (issue 31, item 9): the chat and the log are reached with Shift+Tab
and scroll from the keyboard; text typed while a pane or the inspector has the focus goes
to the input, never lost; Enter on the inspector opens a row only when the user went
there, not while typing; Ctrl+J adds a line in the approval editor.

Keys are queued on the app all at once, as a terminal delivers a fast burst.
"""

from __future__ import annotations

import time

from textual import events
from textual.keys import _character_to_key

from cave_tui.frontends.tui.app import TYPING_GRACE

from .conftest import make_app, settle, submit, wait_for


def _burst(app, text: str, *then: str, at: float | None = None) -> None:
    """Queue *text* as typed characters, then the named keys (stamped *at*, if given)."""
    keys = [events.Key(_character_to_key(c), c) for c in text] + [events.Key(k, None) for k in then]
    for key in keys:
        if at is not None:
            key.time = at
        app.post_message(key)


async def _pause(pilot) -> None:
    for _ in range(5):
        await pilot.pause()


async def test_shift_tab_reaches_the_chat_and_log_they_scroll_and_typing_returns_to_the_input():
    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.history.add = sent.append  # type: ignore[method-assign]
        for i in range(30):
            app.chat.add_notice(f"line {i}")
        await pilot.pause()
        seen = []
        while app.focused is not app.chat and len(seen) < 6:
            await pilot.press("shift+tab")  # back from the input: inspector, log, chat
            seen.append(app.focused)
        assert seen[-2:] == [app.steplog, app.chat]
        await wait_for(pilot, lambda: app.chat.max_scroll_y > 0)
        await pilot.press("home")
        await wait_for(pilot, lambda: app.chat.scroll_y == 0)
        await pilot.press("pagedown", "down")
        await wait_for(pilot, lambda: app.chat.scroll_y > 1)
        await pilot.press("end")
        await wait_for(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y)
        # Typing while the chat has the focus: the text goes to the input, Enter sends it.
        _burst(app, "!x = 1", "enter")
        await wait_for(pilot, lambda: bool(sent))
        assert sent == ["!x = 1"] and app.focused is app.prompt
        await wait_for(pilot, lambda: app.services.runtime._ns.get("x") == 1)
        app.steplog.focus()
        await pilot.pause()
        _burst(app, "hello")
        await wait_for(pilot, lambda: app.prompt.text == "hello")
        assert app.focused is app.prompt
        app.screen.set_focus(None)  # nothing has the focus (a click on a bare area)
        _burst(app, " there")
        await wait_for(pilot, lambda: app.prompt.text == "hello there")
        assert app.focused is app.prompt


async def test_typing_with_the_inspector_focused_goes_to_the_input_and_enter_sends_it():
    from cave_tui.frontends.tui.screens.detail import DetailScreen

    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!v = 1")
        await wait_for(pilot, lambda: app.inspector.table.shown != [])
        app.history.add = sent.append  # type: ignore[method-assign]
        await pilot.press("f2")
        assert app.focused is app.inspector.table
        _burst(app, "!w = 2", "enter")
        await wait_for(pilot, lambda: bool(sent))
        await _pause(pilot)
        assert sent == ["!w = 2"] and app.focused is app.prompt
        assert not isinstance(app.screen, DetailScreen)
        await wait_for(pilot, lambda: app.services.runtime._ns.get("w") == 2)
        # A paste, too.
        await wait_for(pilot, lambda: not app.busy)
        app.inspector.table.focus()
        await pilot.pause()
        app.post_message(events.Paste("!p = 5"))
        _burst(app, "", "enter")
        await wait_for(pilot, lambda: len(sent) == 2)
        assert sent[1] == "!p = 5" and not isinstance(app.screen, DetailScreen)
        await wait_for(pilot, lambda: app.services.runtime._ns.get("p") == 5 and not app.busy)


async def test_enter_on_the_inspector_opens_a_row_only_when_not_typing():
    from cave_tui.frontends.tui.screens.detail import DetailScreen

    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!v = 1")
        await wait_for(pilot, lambda: app.inspector.table.shown != [])
        app.history.add = sent.append  # type: ignore[method-assign]
        typed_at = time.monotonic()
        _burst(app, "!u = 3", at=typed_at)
        await wait_for(pilot, lambda: app.prompt.text == "!u = 3")
        # The focus lands on the table while the user is still typing: Enter is theirs.
        app.inspector.table.focus()
        await pilot.pause()
        _burst(app, "", "enter", at=typed_at + TYPING_GRACE / 2)
        await wait_for(pilot, lambda: bool(sent))
        await _pause(pilot)
        assert sent == ["!u = 3"] and not isinstance(app.screen, DetailScreen)
        # Navigated there, no typing for a while: Enter opens the highlighted row.
        app.inspector.table.focus()
        await pilot.pause()
        _burst(app, "", "down", "up", "enter", at=typed_at + TYPING_GRACE * 3)
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert sent == ["!u = 3"]


async def test_ctrl_j_adds_a_line_in_the_approval_editor():
    from cave_tui.frontends.tui.screens.approve import ApprovalScreen

    app = make_app(["```python\nfirst = 1\n```", "Done."])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "/approve ask")
        app.prompt.text = "go"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("ctrl+e")
        editor = app.screen.query_one("#approve-code")
        await wait_for(pilot, lambda: app.focused is editor)
        _burst(app, "", "end", "ctrl+j")
        _burst(app, "second = 2")
        await wait_for(pilot, lambda: editor.text.endswith("2"))
        assert editor.text == "first = 1\nsecond = 2"
        await pilot.press("ctrl+r")
        await settle(pilot)
        runtime = app.services.runtime
        assert runtime._ns["first"] == 1 and runtime._ns["second"] == 2
        assert app.prompt.text == ""
