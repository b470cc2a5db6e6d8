"""Replaying the user's own cells (`!` lines): run the recorded code, as the front end did.

`AppServices.run_python` runs a `!` cell on the runtime directly (no model, no agent
history) and reports it as `agent == USER_AGENT` events; replay does the same here.
"""

from __future__ import annotations

from typing import Any

from cave_tui.agent import events as ev
from cave_tui.session.reader import UserCell


def code_event(cell: UserCell) -> ev.CodeEvent:
    """The CodeEvent a front end showed for *cell*."""
    return ev.CodeEvent(
        content=cell.code, code=cell.code, agent=ev.USER_AGENT, source=ev.CodeSource.USER
    )


async def run_user_cell(cell: UserCell, runtime: Any) -> ev.Event:
    """Run *cell*'s code on *runtime*, unchecked as the user's own (`run_python`); the
    outcome event, as `run_python` reports it."""
    from cave_tui.runtime.base import execute_streaming

    result = await execute_streaming(runtime, cell.code, None, _drop, checked=False)
    return ev.user_cell_event(result)


def _drop(_: str) -> None:
    """Output is compared once the cell ends: the chunks are not needed."""
