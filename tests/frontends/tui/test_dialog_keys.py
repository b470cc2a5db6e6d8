"""A dialog never takes keys meant for the input (issue 31, item 7).

Typing on while a dialog opens (`/inject data.csv as list` asks whether to shadow the
builtin `list`): the keys go to the input, in order; an answer key counts only once the
dialog has been on screen, with no typing, for a moment; nothing is sent as a turn.
Keys are queued on the app all at once, as a terminal delivers a fast burst or a paste.
"""

from __future__ import annotations

import time

from textual import events
from textual.keys import _character_to_key

from cave_tui.frontends.tui.screens.base import ANSWER_GRACE

from .conftest import make_app, settle, wait_for


def _burst(app, text: str, *then: str, at: float | None = None) -> None:
    """Queue *text* as typed characters, then the named keys (stamped *at*, if given)."""
    keys = [events.Key(_character_to_key(c), c) for c in text] + [events.Key(k, None) for k in then]
    for key in keys:
        if at is not None:
            key.time = at
        app.post_message(key)


async def _open_shadow_dialog(app, pilot, source) -> float:
    """Send `/inject <source> as list`; return the time just before it was sent."""
    from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

    before = time.monotonic()
    app.prompt.text = f"/inject {source} as list"
    app.prompt.action_submit()
    await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
    return before


async def _answer_when_ready(app, pilot, key: str) -> None:
    screen = app.screen
    await wait_for(pilot, lambda: screen.answers_from(pilot.app.answer_grace) <= time.monotonic())
    _burst(app, key)
    await wait_for(pilot, lambda: app.screen is not screen)


async def _pause(pilot) -> None:
    """Let the queued keys be handled (`settle` would wait for the command that asks)."""
    for _ in range(5):
        await pilot.pause()


def _csv(tmp_path):
    source = tmp_path / "data.csv"
    source.write_text("a,b\n1,2\n3,4\n")
    return source


async def test_a_line_typed_as_the_dialog_opens_stays_in_the_input(tmp_path):
    from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

    model_replies = ["a reply the model must never be asked for"]
    app = make_app(model_replies)
    app.answer_grace = ANSWER_GRACE  # make_app turns it off for the other tests
    sent: list[str] = []
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.history.add = sent.append  # type: ignore[method-assign]
        await _open_shadow_dialog(app, pilot, _csv(tmp_path))
        _burst(app, "/inject ../data/penguins.csv", "enter")  # typed on as it opened
        await wait_for(pilot, lambda: app.prompt.text == "/inject ../data/penguins.csv")
        await _pause(pilot)
        assert isinstance(app.screen, ConfirmScreen)  # `n` in "/inject" did not answer it
        assert sent == [f"/inject {tmp_path / 'data.csv'} as list"]  # Enter sent nothing
        assert app.services.model._index == 0
        await _answer_when_ready(app, pilot, "n")  # an explicit answer, once it was shown
        await settle(pilot)
        assert "list" not in app.services.runtime._ns
        assert app.prompt.text == "/inject ../data/penguins.csv"
        assert app.services.model._index == 0 and len(sent) == 1


async def test_an_answer_key_typed_before_the_dialog_showed_and_a_paste_go_to_the_input(
    tmp_path,
):
    from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

    app = make_app([])
    app.answer_grace = ANSWER_GRACE
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        before = await _open_shadow_dialog(app, pilot, _csv(tmp_path))
        _burst(app, "y", at=before)  # typed before the dialog was on screen
        app.post_message(events.Paste("es = list(range(3))"))  # a whole line pasted
        await wait_for(pilot, lambda: app.prompt.text == "yes = list(range(3))")
        await _pause(pilot)
        assert isinstance(app.screen, ConfirmScreen)
        await _answer_when_ready(app, pilot, "y")
        await settle(pilot)
        assert app.services.runtime._ns["list"].shape == (2, 2)  # answered Yes: injected
        assert app.prompt.text == "yes = list(range(3))"


async def test_enter_right_after_a_paste_into_an_open_dialog_does_not_answer_it(tmp_path):
    from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

    app = make_app([])
    app.answer_grace = ANSWER_GRACE
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await _open_shadow_dialog(app, pilot, _csv(tmp_path))
        screen = app.screen
        await wait_for(pilot, lambda: screen.answers_from(app.answer_grace) <= time.monotonic())
        app.post_message(events.Paste("!print(list)"))  # a line pasted, Enter right after
        _burst(app, "", "enter")
        await wait_for(pilot, lambda: app.prompt.text == "!print(list)")
        await _pause(pilot)
        assert app.screen is screen and isinstance(screen, ConfirmScreen)


async def test_a_dialog_answered_before_it_was_shown_closes_without_crashing_the_app():
    """Under load the answer can be handled before the dialog's first layout (CI once):
    the app must keep running and the answer must arrive."""
    from cave_tui.frontends.tui.screens.approve import ApprovalScreen
    from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        results: list[object] = []
        confirm = ConfirmScreen("Replace the namespace?")
        app.push_screen(confirm, callback=results.append)
        confirm.action_answer(False)  # before its mount ran
        approve = ApprovalScreen("x = 1\n")
        app.push_screen(approve, callback=results.append)
        approve.action_edit()
        approve.action_run()
        await settle(pilot)
        assert results == [False, "x = 1\n"]
        assert app.is_running and app.screen is app.screen_stack[0]
        app.prompt.text = "!y = 2"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: "y" in app.services.runtime._ns)
