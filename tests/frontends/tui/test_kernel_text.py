"""Kernel text in the app (headless): names, reprs, class names, cells and answers are drawn
as text, never as markup or terminal control; a `[/]` column does not crash the detail view."""

from __future__ import annotations

from typing import Any

from cave_tui.app.config import Config
from cave_tui.frontends.tui.screens.detail import DetailScreen

from .conftest import make_app, settle, submit, wait_for

# The kernel's own strings: a title change (OSC 0), a clipboard write (OSC 52), an 8-bit CSI.
SETUP = "; ".join(
    [
        r"!E = '\x1b]0;PWNED\x07'; C = '\x1b]52;c;cm0gLXJmIH4K\x07'; Z = '\x9b2J'",
        "globals()['bad' + E] = 1",
        "K = type('Cls' + E, (), {'__repr__': lambda self: 'rep' + E + C + Z})",
        "obj = K()",
        "import pandas as pd",
        "frame = pd.DataFrame({'[/]': [1], 'weight [kg]': [3.5], 's': ['cell' + E + C + Z]})",
    ]
)
ANSWER = r"```python\nfinal_answer('answer' + E + C + Z + ' [/] end')\n```"
CONTROL = ("\x1b", "\x07", "\x9b", "\x9d")


def screen_text(app: Any) -> str:
    """Every character the app would send to the terminal for its current screen, as text."""
    strips = app.screen._compositor.render_strips()
    return "\n".join("".join(segment.text for segment in strip) for strip in strips)


def assert_no_control(text: str) -> None:
    found = [c for c in CONTROL if c in text]
    assert not found, f"raw control characters {found!r} reach the terminal:\n{text}"


async def test_names_reprs_class_names_and_answers_are_drawn_without_escapes():
    app = make_app([ANSWER.replace(r"\n", "\n")], config=Config(kernel=False, guard="trusted"))
    async with app.run_test(size=(150, 45)) as pilot:
        await settle(pilot)
        await submit(pilot, SETUP)
        await submit(pilot, "answer please")
        await wait_for(pilot, lambda: "[/] end" in screen_text(app))
        text = screen_text(app)
        assert_no_control(text)
        assert "answer [/] end" in text  # the answer's text whole, its escapes gone
        inspector = text.splitlines()
        assert any("bad " in line and " int " in line for line in inspector), text
        assert any("obj " in line and " Cls " in line for line in inspector), text
        app.open_detail("obj")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await settle(pilot)
        await wait_for(pilot, lambda: "rep" in screen_text(app))
        assert_no_control(screen_text(app))


async def test_the_detail_view_shows_markup_like_labels_whole():
    app = make_app([], config=Config(kernel=False, guard="trusted"))
    async with app.run_test(size=(150, 45)) as pilot:
        await settle(pilot)
        await submit(pilot, SETUP)
        app.open_detail("frame")
        await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
        await settle(pilot)
        await wait_for(pilot, lambda: "weight [kg]" in screen_text(app))
        text = screen_text(app)
        head = [line for line in text.splitlines() if "weight [kg]" in line]
        assert head and "[/]" in head[0], text  # the labels as they are, unit included
        assert "cell" in text
        assert_no_control(text)
        screen = app.screen
        assert isinstance(screen, DetailScreen) and screen.is_attached
        await wait_for(pilot, lambda: screen.detail is not None and bool(screen.detail.describe))
        screen.action_summary()  # `v`: its dtypes and describe(), the labels whole there too
        await wait_for(pilot, lambda: " mean " in screen_text(app))
        text = screen_text(app)
        assert "weight [kg]" in text and "[/]" in text, text
        assert_no_control(text)
