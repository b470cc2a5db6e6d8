"""Keys in the panes (issue 31, item 9): the chat and the log are reached with Shift+Tab
and scroll from the keyboard; text typed or pasted while a pane or the inspector has the
focus goes to the input, in order, never lost; Enter on the inspector opens a row when the
user went there, and ends the line when it follows text handed on from there (no clock);
Ctrl+J adds a line in the approval editor.

Keys are queued on the app all at once, as a terminal delivers a fast burst or a paste.
"""

from __future__ import annotations

from textual import events
from textual.keys import _character_to_key

from .conftest import make_app, settle, submit, wait_for


def _burst(app, text: str, *then: str) -> None:
    """Queue *text* as typed characters, then the named keys, with no wait in between."""
    for char in text:
        app.post_message(events.Key(_character_to_key(char), char))
    for key in then:
        app.post_message(events.Key(key, None))


async def _pause(pilot) -> None:
    for _ in range(5):
        await pilot.pause()


async def test_shift_tab_reaches_the_chat_and_the_log_which_scroll_and_show_how():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        for i in range(40):
            app.chat.add_notice(f"line {i}")
        app.steplog.add_code(1, "user", "\n".join(f"x{i} = {i}" for i in range(80)))
        await pilot.pause()
        seen = []
        while app.focused is not app.chat and len(seen) < 6:
            await pilot.press("shift+tab")  # back from the input: inspector, log, chat
            seen.append(app.focused)
        assert app.steplog in seen and seen[-1] is app.chat
        assert "Scroll" in str(app.query_one("#keys").render())  # the key bar says how
        for pane in (app.chat, app.steplog):
            pane.focus()
            await wait_for(pilot, lambda p=pane: p.max_scroll_y > 0)
            await pilot.press("home")
            await wait_for(pilot, lambda p=pane: p.scroll_y == 0)
            await pilot.press("pagedown", "down")
            await wait_for(pilot, lambda p=pane: p.scroll_y > 2)
            await pilot.press("pageup", "up")
            await wait_for(pilot, lambda p=pane: p.scroll_y == 0)
            await pilot.press("end")
            await wait_for(pilot, lambda p=pane: p.scroll_y == p.max_scroll_y)
            assert app.focused is pane and app.prompt.text == ""


async def test_text_typed_in_the_chat_or_log_goes_to_the_input_in_order():
    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.history.add = sent.append  # type: ignore[method-assign]
        app.chat.focus()
        await pilot.pause()
        _burst(app, "!x = 1", "enter")
        await wait_for(pilot, lambda: bool(sent))
        assert sent == ["!x = 1"] and app.focused is app.prompt
        await wait_for(pilot, lambda: app.services.runtime._ns.get("x") == 1)
        await settle(pilot)
        app.steplog.focus()
        await pilot.pause()
        _burst(app, "hello")
        app.post_message(events.Paste(" pasted"))
        _burst(app, " world")
        await wait_for(pilot, lambda: app.prompt.text.endswith("world"))
        assert app.prompt.text == "hello pasted world" and app.focused is app.prompt
        app.screen.set_focus(None)  # nothing has the focus (a click on a bare area)
        _burst(app, "!")
        await wait_for(pilot, lambda: app.prompt.text.endswith("!"))
        assert app.prompt.text == "hello pasted world!" and app.focused is app.prompt


async def test_a_line_typed_or_pasted_on_the_inspector_goes_to_the_input_and_enter_sends_it():
    from cave_tui.frontends.tui.screens.detail import DetailScreen

    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!v = 1")
        await wait_for(pilot, lambda: app.inspector.table.shown != [])
        app.history.add = sent.append  # type: ignore[method-assign]
        await pilot.press("f2")
        await wait_for(pilot, lambda: app.focused is app.inspector.table)
        _burst(app, "!w = 2", "enter")
        await wait_for(pilot, lambda: bool(sent))
        await _pause(pilot)
        assert sent == ["!w = 2"] and app.focused is app.prompt
        assert not isinstance(app.screen, DetailScreen)
        await wait_for(pilot, lambda: app.services.runtime._ns.get("w") == 2)
        await settle(pilot)
        # A paste (one event), then Enter.
        app.inspector.table.focus()
        await wait_for(pilot, lambda: app.focused is app.inspector.table)
        app.post_message(events.Paste("!p = 5"))
        _burst(app, "", "enter")
        await wait_for(pilot, lambda: len(sent) == 2)
        await _pause(pilot)
        assert sent[1] == "!p = 5" and not isinstance(app.screen, DetailScreen)
        await wait_for(pilot, lambda: app.services.runtime._ns.get("p") == 5)


async def test_enter_on_the_inspector_opens_the_row_once_the_user_went_there():
    """Whatever the clock: a line typed in the input just before, then F2 (or Shift+Tab)
    and Enter, opens the row; the typed line waits in the input."""
    from cave_tui.frontends.tui.screens.detail import DetailScreen

    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!v = 1")
        await wait_for(pilot, lambda: app.inspector.table.shown != [])
        app.history.add = sent.append  # type: ignore[method-assign]
        app.inspector.table.focus()
        await wait_for(pilot, lambda: app.focused is app.inspector.table)
        _burst(app, "!u = 3")  # handed on: the input has it, and the focus
        await wait_for(pilot, lambda: app.prompt.text == "!u = 3")
        assert app.focused is app.prompt
        await pilot.press("f2")  # at once: no pause for any clock
        await wait_for(pilot, lambda: app.focused is app.inspector.table)
        _burst(app, "", "enter")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        assert sent == [] and app.prompt.text == "!u = 3"


async def test_ctrl_j_adds_a_line_in_the_approval_editor():
    from cave_tui.frontends.tui.screens.approve import ApprovalScreen

    app = make_app(["```python\nfirst = 1\n```", "Done."])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "/approve ask")
        app.prompt.text = "go"
        await pilot.press("enter")  # not `submit`: its settle would wait for the dialog
        await wait_for(pilot, lambda: isinstance(app.screen, ApprovalScreen))
        await pilot.press("ctrl+e")
        editor = app.screen.query_one("#approve-code")
        await wait_for(pilot, lambda: app.focused is editor)
        _burst(app, "", "end", "ctrl+j")
        _burst(app, "second = 2")
        await wait_for(pilot, lambda: editor.text.endswith("2"))
        assert editor.text == "first = 1\nsecond = 2"
        await pilot.press("ctrl+r")
        await wait_for(pilot, lambda: app.services.runtime._ns.get("second") == 2)
        assert app.services.runtime._ns["first"] == 1 and app.prompt.text == ""
