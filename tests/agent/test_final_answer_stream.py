"""A streamed cell's output never shows final_answer()'s marked answer, however it is split."""

from __future__ import annotations

from cave_tui.agent.final_answer import CLOSE, OPEN, MarkedAnswerFilter


def test_a_marked_answer_split_anywhere_is_removed():
    text = f"before\n{OPEN}There are 3 rows.{CLOSE}\nafter\n"
    for size in range(1, len(text) + 1):
        marks = MarkedAnswerFilter()
        pieces = [text[i : i + size] for i in range(0, len(text), size)]
        assert "".join(marks.feed(p) for p in pieces) == "before\nafter\n", size


def test_text_that_only_looks_like_a_start_is_passed_on():
    marks = MarkedAnswerFilter()
    assert marks.feed("a \u27ea") == "a "
    assert marks.feed("b") == "\u27eab"
