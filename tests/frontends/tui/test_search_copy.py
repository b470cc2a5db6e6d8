"""Search and copy (issue 34, item 3): Ctrl+F finds text in the chat and the log (next,
previous, scrolled into view, kernel text found as plain text); Esc gives the focus back to
the input; Ctrl+Y on a focused cell, output or answer copies it through OSC 52."""

from __future__ import annotations

import base64

from cave_tui.frontends.tui.widgets.chat import AgentMessage, Notice
from cave_tui.frontends.tui.widgets.search import HIT_CLASS, SearchBar
from cave_tui.frontends.tui.widgets.steplog import FoldedOutput, StepEntry

from .conftest import TWO_STEP_FRAME, make_app, settle, submit, wait_for


async def _open_search(app, pilot, query: str) -> SearchBar:
    await pilot.press("ctrl+f")
    await wait_for(pilot, lambda: bool(app.query(SearchBar)) and app.focused is not app.prompt)
    bar = app.query_one(SearchBar)
    assert app.focused is bar.input
    for char in query:
        await pilot.press(char if char != " " else "space")
    await pilot.pause()
    return bar


async def test_ctrl_f_finds_in_the_chat_and_the_log_next_previous_and_esc_back_to_the_input():
    app = make_app(TWO_STEP_FRAME)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "Which penguin is the heaviest?")
        await settle(pilot)
        bar = await _open_search(app, pilot, "gentoo")
        kinds = [type(m.widget).__name__ for m in bar.matches]
        # the chat first (the answer), then the log (the cell's code and its output)
        assert "AgentMessage" in kinds and "Static" in kinds and "FoldedOutput" in kinds
        assert kinds.index("AgentMessage") < kinds.index("FoldedOutput")
        assert bar.index == 0 and "1 of" in str(bar.count.render())
        first = bar.current
        assert first is not None and first.widget.has_class(HIT_CLASS)
        await pilot.press("enter")  # next
        assert bar.index == 1
        await pilot.press("f3")
        assert bar.index == 2 % len(bar.matches)
        await pilot.press("shift+f3", "shift+f3")  # previous, twice
        assert bar.index == 0
        await pilot.press("shift+f3")  # wraps to the last
        assert bar.index == len(bar.matches) - 1
        assert isinstance(bar.current.widget, FoldedOutput)  # the last match: the log's
        assert bar.current.widget.has_class(HIT_CLASS)
        await pilot.press("escape")
        await wait_for(pilot, lambda: not app.query(SearchBar))
        await wait_for(pilot, lambda: app.focused is app.prompt)
        assert not app.query(f".{HIT_CLASS}")


async def test_a_match_far_up_is_scrolled_into_view_and_a_folded_output_unfolds():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.chat.add_notice("the needle is here")
        for i in range(60):
            app.chat.add_notice(f"filler {i}")
        lines = "\n".join(f"row {i}" for i in range(100))
        await submit(pilot, f"!print({lines!r})")
        await settle(pilot)
        await wait_for(pilot, lambda: app.chat.scroll_y == app.chat.max_scroll_y > 0)
        bar = await _open_search(app, pilot, "needle")
        assert len(bar.matches) == 1 and isinstance(bar.current.widget, Notice)
        await wait_for(pilot, lambda: app.chat.scroll_y < app.chat.max_scroll_y / 2)
        bar.input.value = "row 50"  # in the folded middle of the output
        await wait_for(pilot, lambda: bar.current is not None)
        await pilot.press("shift+f3")  # the last match: the output's (before: the code's)
        output = bar.current.widget
        assert isinstance(output, FoldedOutput) and output.expanded
        shown = output.render()
        assert "row 50" in str(shown)


async def test_kernel_text_with_markup_is_found_as_the_characters_it_is():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "!print('[bold]loud[/bold] and [red]x')")
        await settle(pilot)
        bar = await _open_search(app, pilot, "[bold]loud[/bold]")
        (match,) = [m for m in bar.matches if isinstance(m.widget, FoldedOutput)]
        entry = app.steplog.query_one(StepEntry)
        (in_code,) = [m for m in bar.matches if m.widget is entry.code_view]
        assert bar.current == in_code  # the code first: the match in it is marked exactly
        marks = [s for s in in_code.widget.render().spans if "reverse" in str(s.style)]
        assert [(s.start, s.end) for s in marks] == [(in_code.start, in_code.start + 17)]
        await pilot.press("f3")
        assert bar.current == match and not in_code.widget.has_class(HIT_CLASS)
        assert not [s for s in in_code.widget.render().spans if "reverse" in str(s.style)]
        shown = match.widget.content  # the output's plain Text, the match styled
        marks = [s for s in shown.spans if "reverse" in str(s.style)]
        assert [(s.start, s.end) for s in marks] == [(match.start, match.start + 17)]
        assert "[bold]loud[/bold] and [red]x" in str(match.widget.render())  # drawn as text
        bar.input.value = "loud and"  # what markup would have drawn: not what the cell printed
        await pilot.pause()
        assert bar.matches == [] and "no match" in str(bar.count.render())


def _osc52(app) -> list[str]:
    written: list[str] = []
    original = app._driver.write

    def write(data: str) -> None:
        written.append(data)
        original(data)

    app._driver.write = write
    return written


async def test_ctrl_y_copies_the_focused_cell_output_and_answer_through_osc_52():
    app = make_app(TWO_STEP_FRAME)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "Which penguin is the heaviest?")
        await settle(pilot)
        written = _osc52(app)
        entry = list(app.steplog.query(StepEntry))[-1]
        entry.focus()
        await pilot.pause()
        assert "Copy" in str(app.query_one("#keys").render())  # the key bar says how
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: bool(written))
        code = entry.code
        assert written[-1] == f"\x1b]52;c;{base64.b64encode(code.encode()).decode()}\a"
        assert app.clipboard == code
        notes = [str(n.message) for n in app._notifications]
        assert any("Copied the code of step 2" in n for n in notes)

        output = entry.query_one(FoldedOutput)
        output.focus()
        await pilot.pause()
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.clipboard == output.full)
        assert "'Gentoo'" in app.clipboard

        reply = list(app.chat.query(AgentMessage))[-1]
        reply.focus()
        await pilot.pause()
        await pilot.press("ctrl+y")
        await wait_for(pilot, lambda: app.clipboard == reply.text)
        assert "**Gentoo**" in app.clipboard  # the Markdown the model wrote
        assert any("Copied the reply of step 3" in str(n.message) for n in app._notifications)
        await pilot.press("x")  # a letter typed there still goes to the input
        await wait_for(pilot, lambda: app.prompt.text == "x")


def _reversed_words(app, widget) -> list[str]:
    """The text the widget draws in reverse video (a search's mark), run by run."""
    lines = widget.render_lines(widget.region.reset_offset)
    runs, run = [], ""
    for strip in lines:
        for segment in strip:
            if segment.style is not None and segment.style.reverse:
                run += segment.text
            elif run:
                runs.append(run)
                run = ""
    return runs + ([run] if run else [])


async def test_a_match_in_a_markdown_reply_marks_its_words_not_the_whole_reply():
    reply = "The **Gentoo** penguin is the heaviest; gentoo wins."
    app = make_app([reply])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "Which penguin is the heaviest?")
        await settle(pilot)
        app.chat.add_notice("a `gentoo` notice")
        bar = await _open_search(app, pilot, "gentoo")
        message = bar.current.widget
        assert isinstance(message, AgentMessage)
        await pilot.pause()
        tail = message.markdown._tail
        assert _reversed_words(app, tail) == ["Gentoo", "gentoo"]
        await pilot.press("enter", "enter")  # the notice's
        assert isinstance(bar.current.widget, Notice)
        await pilot.pause()
        assert _reversed_words(app, tail) == []  # unmarked when the search moves on
        assert _reversed_words(app, bar.current.widget) == ["gentoo"]
