"""Keys are handled in the order they arrive, as when a line is pasted or typed fast.

The keys are queued on the app all at once (as a terminal delivers a fast burst or a
paste), before any of them is handled: the pilot's `press` would wait between keys.
"""

from __future__ import annotations

import time

from textual import events
from textual.keys import _character_to_key

from .conftest import chat_text, make_app, settle, wait_for


def _burst(app, text: str, *then: str) -> None:
    """Queue *text* as typed characters, then the named keys, with no wait in between."""
    for char in text:
        app.post_message(events.Key(_character_to_key(char), char))
    for key in then:
        app.post_message(events.Key(key, None))


async def _answers_taken(pilot) -> None:
    """Wait until the open dialog takes answer keys (screens/base.py: the key rule)."""
    screen = pilot.app.screen
    await wait_for(pilot, lambda: screen.answers_from(pilot.app.answer_grace) <= time.monotonic())


async def test_a_fast_line_then_enter_is_sent_exactly():
    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.history.add = sent.append  # type: ignore[method-assign]
        for line in ("/vars", "/inject airlines.csv as b6", "!print('hello world number 4')"):
            _burst(app, line, "enter")
            await wait_for(pilot, lambda n=len(sent): n < len(sent) or False, timeout=10)
            await settle(pilot)
        assert sent == ["/vars", "/inject airlines.csv as b6", "!print('hello world number 4')"]
        assert app.prompt.text == ""


async def test_ctrl_j_stays_between_the_characters_typed_around_it():
    app = make_app([])
    async with app.run_test() as pilot:
        await settle(pilot)
        _burst(app, "!a = 1")
        _burst(app, "", "ctrl+j")
        _burst(app, "b = 2")
        await wait_for(pilot, lambda: app.prompt.text.endswith("b = 2"))
        assert app.prompt.text == "!a = 1\nb = 2"


async def test_a_paste_followed_by_enter_is_sent():
    app = make_app([])
    sent: list[str] = []
    async with app.run_test() as pilot:
        await settle(pilot)
        app.history.add = sent.append  # type: ignore[method-assign]
        app.post_message(events.Paste("!x = 6 * 7\ny = x + 1\nprint(y)"))
        app.post_message(events.Key("enter", "\r"))
        await wait_for(pilot, lambda: bool(sent))
        await settle(pilot)
        assert sent == ["!x = 6 * 7\ny = x + 1\nprint(y)"]
        await wait_for(pilot, lambda: "y" in app.services.runtime._ns)
        assert app.services.runtime._ns["y"] == 43


async def test_ctrl_f_then_typing_goes_to_the_filter():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.inspector.table.focus()
        await pilot.pause()
        _burst(app, "", "ctrl+f")
        _burst(app, "wide")
        await wait_for(pilot, lambda: app.inspector.filter_input.value == "wide")
        assert app.focused is app.inspector.filter_input


async def test_keys_typed_right_after_closing_a_dialog_reach_the_input():
    from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
    from cave_tui.frontends.tui.screens.detail import DetailScreen

    app = make_app([])
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prompt.text = "!b2 = [1, 2]"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "b2" in app.services.runtime._ns)
        app.history.add = sent.append  # type: ignore[method-assign]
        app.prompt.text = "/show b2"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await settle(pilot)
        await _answers_taken(pilot)  # an answer key counts once the dialog was on screen
        _burst(app, "", "escape")  # close it, then type at once (`d` would delete b2)
        _burst(app, "/vars", "enter")
        await wait_for(pilot, lambda: "/vars" in sent)
        assert sent == ["/show b2", "/vars"] and "b2" in app.services.runtime._ns
        app.prompt.text = "/reset"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await _answers_taken(pilot)
        _burst(app, "n")  # the answer, then a line typed straight after it
        _burst(app, "!x = 1", "enter")
        await wait_for(pilot, lambda: "x" in app.services.runtime._ns)
        await settle(pilot)
        assert sent[-1] == "!x = 1" and "b2" in app.services.runtime._ns


async def test_commands_sent_fast_run_in_the_order_sent(tmp_path):
    source = tmp_path / "big.csv"
    source.write_text("a,b\n" + "".join(f"{i},{i * 2}\n" for i in range(300_000)))
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        _burst(app, f"/inject {source} as big", "enter")  # takes a while: a file to read
        _burst(app, "/del big", "enter")  # quick: it must wait for the inject
        await wait_for(pilot, lambda: any(w in chat_text(app) for w in ("Deleted", "no variable")))
        await settle(pilot)
        assert "big" not in app.services.runtime._ns and "no variable" not in chat_text(app)
