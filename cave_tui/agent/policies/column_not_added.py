"""ColumnNotAdded: "Add a column `season` to `weather`", and `weather` has none."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cave_tui.agent.observation import frame_columns
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, Turn
from cave_tui.runtime.shipped.summary import VarInfo

_ADD_COLUMN = re.compile(
    r"\badd (?:a |the )?(?:new )?(?:column `?(\w+)`?|`(\w+)` column) to `(\w+)`", re.IGNORECASE
)


def columns_not_added(rows: Iterable[VarInfo], request: str) -> list[tuple[str, str]]:
    """(frame, column) for "Add a column `season` to `weather`" when `weather` has none."""
    frames = frame_columns(rows)
    found = []
    for match in _ADD_COLUMN.finditer(request):
        column, frame = match[1] or match[2], match[3]
        if frame in frames and column not in frames[frame]:
            found.append((frame, column))
    return found


def column_note(item: tuple[str, str]) -> str:
    frame, column = item
    return (
        f"The request asks for a column `{column}` in `{frame}`, and `{frame}` has no such "
        f"column yet: add it ({frame}['{column}'] = ...), then call final_answer."
    )


class ColumnNotAdded(BasePolicy):
    """An answer given while the column the request asks to add is missing is questioned."""

    name = "column_not_added"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        notes = [column_note(c) for c in columns_not_added(await turn.rows(), turn.task)]
        return self.joined(InterventionKind.DOUBT, notes)
