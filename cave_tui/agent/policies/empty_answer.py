"""EmptyAnswer: a final answer whose result is empty or zero, when a string the turn's code
filters on is spelt unlike the request or the data.

An empty result is most often a filter that matched nothing because of a misspelt value,
and nothing fails. But zero is often the true answer: the answer is questioned only on
evidence, a string that is close to, and not the same as, a word of the request or a
value of a categorical column.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cave_tui.agent.observation import frame_columns, frame_levels
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.spelling import (
    level_note,
    misspelt_note,
    misspelt_values,
    unknown_levels,
)
from cave_tui.agent.turn import Answer, Turn
from cave_tui.runtime.shipped.summary import VarInfo


def empty_results(rows: Iterable[VarInfo], names: Iterable[str]) -> list[str]:
    """Which of *names* (a cell's changed names) now hold an empty or zero value."""
    wanted = set(names)
    return [row.name for row in rows if row.name in wanted and row.is_empty]


def empty_note(names: list[str], evidence: Sequence[str] = ()) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    verb = "is" if len(names) == 1 else "are"
    note = (
        f"{listed} {verb} empty or zero, and a value the code matches may be misspelt, so that "
        "answer was not given yet. Check the exact values you matched against the data or "
        "the user's words, and fix the code. If empty or zero is truly the answer, call "
        "final_answer again."
    )
    return "\n".join([note, *evidence])


class EmptyAnswer(BasePolicy):
    """An empty or zero final answer is questioned once, when the turn's code matches a
    string spelt unlike the request or the data."""

    name = "empty_answer"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        if answer.cell is None:
            return None
        rows = await turn.rows()
        empty = empty_results(rows, answer.cell.result.changed)
        if not empty:
            return None
        columns = [c for frame in frame_columns(rows).values() for c in frame]
        levels = frame_levels(rows)
        evidence: list[str] = []
        for code in turn.ran:
            evidence += [misspelt_note(p) for p in misspelt_values(code, turn.task, columns)]
            evidence += [level_note(item) for item in unknown_levels(code, levels)]
        if not evidence:
            return None
        return self.act(InterventionKind.DOUBT, empty_note(empty, list(dict.fromkeys(evidence))))
