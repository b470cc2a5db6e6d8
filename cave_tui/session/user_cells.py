"""Replaying the user's own cells (`!` lines): run the recorded code, as the front end did.

`AppServices.run_python` runs a `!` cell on the runtime directly (no model, no agent
history) with `cells.run_cell(author=USER)`; replay runs it the same way (`author=REPLAY`).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cave_tui.agent import events as ev
from cave_tui.agent.cells import CellAuthor, cell_event, run_cell
from cave_tui.runtime.base import ExecutionResult
from cave_tui.session.reader import UserCell

if TYPE_CHECKING:
    from cave_tui.runtime.base import Runtime


def code_event(cell: UserCell) -> ev.CodeEvent:
    """The CodeEvent a front end showed for *cell*."""
    return ev.CodeEvent(
        content=cell.code, code=cell.code, agent=ev.USER_AGENT, source=ev.CodeSource.USER
    )


async def run_user_cell(cell: UserCell, runtime: Runtime) -> ev.Event:
    """Run *cell*'s code on *runtime*, unchecked as the user's own (`run_python`); the
    outcome event, as `run_python` reports it (output is compared once the cell ends)."""
    result: ExecutionResult | None = None
    async for item in run_cell(runtime, cell.code, author=CellAuthor.REPLAY):
        if isinstance(item, ExecutionResult):
            result = item
    assert result is not None  # `run_cell` ends with the result
    return cell_event(result, author=CellAuthor.REPLAY)
