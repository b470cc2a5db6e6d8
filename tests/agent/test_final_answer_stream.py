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


async def test_a_numpy_scalar_answer_reads_as_its_value(runtime):
    """`final_answer(df.x.mean())` answers 0.783, not NumPy 2's `np.float64(0.783)`: a
    person reads it, and an answer format around it stays as asked. Other values keep
    their repr."""
    from cave_tui import CaveAgent
    from cave_tui.models import ScriptedModel

    cells = [
        "final_answer(flights['dep_delay'].mean())",
        "import numpy as np\nfinal_answer(np.int64(3))",
        "final_answer([1.5, 'a'])",
        "final_answer(flights['dep_delay'].to_numpy()[:2])",
    ]
    agent = CaveAgent(ScriptedModel([f"```python\n{c}\n```" for c in cells]), runtime=runtime)
    answers = [(await agent.run(f"task {i}")).content for i in range(len(cells))]
    assert answers == ["7.333333333333333", "3", "[1.5, 'a']", "array([ 5., 10.])"]
