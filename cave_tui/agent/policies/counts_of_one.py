"""CountsOfOne: a count per group whose every value is 1: rows were reduced to one per
group before they were counted."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.policies.text_for_numbers import _NUMBER_NOUNS
from cave_tui.agent.turn import Answer, Turn
from cave_tui.runtime.shipped.summary import VarInfo

_COUNT_WORDS = re.compile(rf"\b(?:{'|'.join(_NUMBER_NOUNS['count'])})\b", re.IGNORECASE)
# Calls that leave one row (or value) per group: counting after them gives ones.
_REDUCES = re.compile(r"\.(?:first|last|unique|drop_duplicates|nth)\(|\.head\(1\)|\bset\(")
_SHOWN = re.compile(r"^\s*(?:print|display)\(")  # a look at the data, not a step of the result


def _reduces(cells: Iterable[str]) -> bool:
    lines = (line for code in cells for line in code.splitlines() if not _SHOWN.match(line))
    return any(_REDUCES.search(line) for line in lines)


def ones_for_counts(
    wanted: Iterable[str],
    rows: Iterable[VarInfo],
    request: str,
    stored: Iterable[str],
    cells: Iterable[str] = (),
) -> list[str]:
    """Results of a count per group whose every value shown is 1, where a cell of the turn
    reduced rows to one per group (`.first()`, `.unique()`, `drop_duplicates`): data where
    each group has one row is left alone."""
    if not _COUNT_WORDS.search(request) or not _reduces(cells):
        return []
    done = set(stored)
    found = []
    for row in rows:
        if row.name not in wanted or row.name not in done or row.type_name != "Series":
            continue
        values = row.preview.strip("[]…, ").split(", ")
        if len(values) >= 3 and all(v == "1" for v in values):
            found.append(row.name)
    return found


def ones_note(name: str) -> str:
    return (
        f"Every count shown in `{name}` is 1: the rows were reduced to one per group before "
        "they were counted. Count each group's rows in the full frame (df.groupby('a').size()), "
        f"store that in `{name}`, then call final_answer."
    )


class CountsOfOne(BasePolicy):
    """Counts per group that are all 1 are questioned."""

    name = "counts_of_one"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        rows = await turn.rows()
        found = ones_for_counts(wanted(turn), rows, turn.task, turn.stored, turn.ran)
        notes = [ones_note(n) for n in found]
        return self.joined(InterventionKind.DOUBT, notes)
