"""ErrorHints: after a cell fails, one-line hints for the error classes small models repeat."""

from __future__ import annotations

from cave_tui.agent.observation import (
    error_hints,
    error_kind,
    frame_columns,
    frame_keys,
    frame_levels,
)
from cave_tui.agent.policies.answer_format import form_as_code, form_as_code_hint
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.spelling import misspelt_note, misspelt_values
from cave_tui.agent.turn import CellRecord, Turn


class ErrorHints(BasePolicy):
    """Explains a failed cell: a missing column's close names, a file read where data is
    loaded, a mask without parentheses, a string spelt unlike the request, the request's
    answer form (`@name[value]`) written as code."""

    name = "error_hints"

    async def after_cell(self, turn: Turn, cell: CellRecord) -> Intervention | None:
        if not cell.failed or cell.result.blocked:
            return None
        rows = await turn.rows()
        frames = frame_columns(rows)
        hints = error_hints(
            cell.code, cell.result, frames, frame_levels(rows), frame_keys(rows), turn.task
        )
        columns = [column for frame in frames.values() for column in frame]
        hints += [misspelt_note(p) for p in misspelt_values(cell.code, turn.task, columns)]
        if error_kind(cell.result) == "SyntaxError" and form_as_code(cell.code, turn.task):
            hints.append(form_as_code_hint(turn.task, cell.code))
        if not hints:
            return None
        return self.act(InterventionKind.HINT, "\n".join(hints))
