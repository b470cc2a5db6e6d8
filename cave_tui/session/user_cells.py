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
    """Run *cell*'s code on *runtime*; the outcome event, as `run_python` reports it."""
    result = await runtime.execute(cell.code)
    if result.success:
        return ev.ExecutionOutputEvent(
            content=result.output,
            output=result.output,
            changed=list(result.changed),
            duration=result.duration,
            agent=ev.USER_AGENT,
        )
    return ev.ExecutionErrorEvent(
        content=result.error or "",
        output=result.output,
        error=result.error or "",
        error_type=result.error_type or "",
        changed=list(result.changed),
        duration=result.duration,
        agent=ev.USER_AGENT,
    )
