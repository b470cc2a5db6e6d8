"""One way to run a cell: `run_cell(runtime, code, author=...)`, and its outcome as an event.

Every cell goes through here, whoever wrote it: the agent's (`CaveAgent`), the user's own
`!` cells (`AppServices.run_python`), replayed user cells (`session/user_cells.py`) and
any other front end. It yields the cell's output events as they are written, then its
`ExecutionResult`; `cell_event` turns that result into the event front ends show.

The agent's cells (and a protocol client's, `cave mcp`) are read by the security checker
first; the user's (and their replay) are not: only the sandbox bounds them. Forwarding the
events of sub-agents the cell drives is an optional add-on (`CellAddOn`, see subagents.py).
"""

from __future__ import annotations

import contextlib
import enum
from collections.abc import AsyncIterator
from typing import TYPE_CHECKING, Protocol

from cave_tui.agent import events as ev
from cave_tui.agent.cell_output import CellEvents
from cave_tui.runtime.base import ExecutionResult, execute_streaming

if TYPE_CHECKING:
    from cave_tui.runtime.base import Runtime


class CellAuthor(enum.Enum):
    """Who wrote a cell: what decides whether the guard reads it and how it is shown."""

    AGENT = "agent"  # the model's code: checked by the security policy
    USER = "user"  # the user's own `!` cell: unchecked
    REPLAY = "replay"  # a user cell run again by a replay: unchecked, like the user's
    # A protocol client's cell (`cave mcp`): another agent's code, so checked like the
    # model's; recorded (and replayed) as the user's own cells.
    CLIENT = "client"

    @property
    def checked(self) -> bool:
        """The security checker reads the cell before it runs."""
        return self in (CellAuthor.AGENT, CellAuthor.CLIENT)

    @property
    def agent(self) -> str | None:
        """The `Event.agent` tag of the cell's events (None: the main agent)."""
        return None if self is CellAuthor.AGENT else ev.USER_AGENT


class CellAddOn(Protocol):
    """Something that works around a running cell (the sub-agent forwarding)."""

    def around(self, cell: CellEvents) -> contextlib.AbstractContextManager[None]:
        """Entered while *cell* runs (events put on `cell.queue` are yielded in order)."""
        ...

    async def on_stop(self) -> None:
        """Awaited when the cell is stopped, before the runtime interrupts it."""
        ...


async def run_cell(
    runtime: Runtime,
    code: str,
    *,
    author: CellAuthor,
    timeout: float | None = None,
    step: int = 0,
    add_on: CellAddOn | None = None,
) -> AsyncIterator[ev.Event | ExecutionResult]:
    """Run *code* in *runtime* as *author*'s cell: yield its output (and the add-on's) events
    as they come, then its `ExecutionResult` (last). At most *timeout* seconds (None: the
    runtime's limit). Cancelled, the add-on stops first, then the runtime interrupts the cell."""
    cell = CellEvents(step, agent=author.agent)
    around = add_on.around(cell) if add_on is not None else contextlib.nullcontext()
    with around:
        running = execute_streaming(
            runtime, code, timeout, cell.output.write, checked=author.checked
        )
        on_stop = add_on.on_stop if add_on is not None else None
        async for item in cell.run(running, on_stop=on_stop):
            yield item


def cell_event(
    result: ExecutionResult,
    *,
    author: CellAuthor,
    observation: str = "",
    step: int = 0,
    delivered: str = "",
) -> ev.Event:
    """The event of a cell that ran: its output, its error or its blocked code.

    The agent's carries what the model reads (*observation*) and shows the cell's printed
    text plus *delivered* (a skill's instructions, in full); a user's shows its output, or
    its error.
    """
    agent = author.agent
    if author is CellAuthor.AGENT:
        printed = (result.stdout or "") + delivered  # upstream's content: output, then error
        content, error_content = printed, printed
    else:
        content, error_content = result.output, result.error_text or ""
    if result.success:
        return ev.ExecutionOutputEvent(
            content=content,
            observation=observation,
            step=step,
            agent=agent,
            output=result.output,
            changed=list(result.changed),
            deleted=list(result.deleted),
            duration=result.duration,
            figures=list(result.figures),
            display_width=result.display_width,
            result_frame=result.result_frame,
        )
    if result.blocked:
        violations = [ev.violation_dict(v) for v in result.security_violations]
        return ev.SecurityErrorEvent(
            content=observation or (result.error_text or ""),
            step=step,
            agent=agent,
            violations=violations,
        )
    return ev.ExecutionErrorEvent(
        content=error_content,
        observation=observation,
        step=step,
        agent=agent,
        output=result.output,
        error=result.error_text or "",
        error_type=result.error_type or "",
        changed=list(result.changed),
        deleted=list(result.deleted),
        duration=result.duration,
        timed_out=result.timed_out,
        interrupted=result.interrupted,
        figures=list(result.figures),  # what it drew before it failed
        display_width=result.display_width,
    )
