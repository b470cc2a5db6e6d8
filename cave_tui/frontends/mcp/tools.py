"""What `cave mcp`'s tools and resources do, over the app layer only (no protocol here).

Each method returns the text of its reply or raises `ToolFailed` with the reason (the
server turns it into an error result). Cells run one at a time, as a protocol client's
(`CellAuthor.CLIENT`): the guard reads them, and the reply is what the model would read
(`shape_result`: head and tail kept, tracebacks kept). Every string from the namespace is
returned as printable text (`printable`).
"""

from __future__ import annotations

import asyncio
import shlex
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cave_tui.agent import events as ev
from cave_tui.agent.cells import CellAuthor
from cave_tui.agent.prompt import describe_namespace
from cave_tui.app.commands import CommandContext, load_commands
from cave_tui.frontends.mcp.front_end import McpFrontEnd
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices


class ToolFailed(Exception):
    """A tool did not do what it was asked; the message says why (an error result)."""


class NoSuchVariable(ToolFailed):
    """The namespace has no such name."""


@dataclass(frozen=True)
class CellReply:
    """What a cell run for a client gave: the text the model would read, and its figures
    (PNG bytes, checked and bounded by the runtime: runtime/figures.py)."""

    text: str
    figures: tuple[bytes, ...] = ()


@dataclass
class NamespaceTools:
    """The namespace operations of `cave mcp` on one `AppServices` (started by the caller)."""

    services: AppServices
    busy: asyncio.Lock = field(default_factory=asyncio.Lock)  # one cell or command at a time

    async def run(self, code: str) -> CellReply:
        """Run *code* in the live namespace; its outcome as the model would read it, and
        the figures it displayed. `ToolFailed` when the guard refuses it or it raises (the
        traceback in the text)."""
        outcome: ev.Event | None = None
        async with self.busy:
            async for event in self.services.run_python(code, author=CellAuthor.CLIENT):
                if isinstance(
                    event, ev.ExecutionOutputEvent | ev.ExecutionErrorEvent | ev.SecurityErrorEvent
                ):
                    outcome = event
        if outcome is None:  # pragma: no cover - `run_python` always ends with the outcome
            raise ToolFailed("the cell ended without an outcome")
        if isinstance(outcome, ev.ExecutionOutputEvent):
            return CellReply(printable(outcome.observation), tuple(outcome.figures))
        if isinstance(outcome, ev.ExecutionErrorEvent):
            raise ToolFailed(printable(outcome.observation))
        raise ToolFailed(printable(outcome.content))

    async def list_variables(self) -> str:
        """The namespace as the agent's prompt describes it (bounded)."""
        rows = await self.services.live_runtime.namespace_summary()
        return printable(describe_namespace(rows))

    async def describe(self, name: str) -> str:
        """The detail view of *name* (bounded): type, shape, head, dtypes, describe()."""
        try:
            detail = await self.services.live_runtime.detail(name)
        except KeyError:
            raise NoSuchVariable(f"no variable named {name!r} in the namespace") from None
        return printable(detail.to_markdown())

    async def inject(self, path: str, name: str | None = None) -> str:
        """`/inject PATH [as NAME]`: load a file (or pkg:MODULE.ATTR) into the namespace."""
        line = f"/inject {shlex.quote(path)}" + (f" as {shlex.quote(name)}" if name else "")
        return await self._command(line)

    async def retrieve(self, name: str, path: str | None = None) -> str:
        """`/retrieve NAME [PATH]`: save a variable to a file (never overwritten here)."""
        line = f"/retrieve {shlex.quote(name)}" + (f" {shlex.quote(path)}" if path else "")
        return await self._command(line)

    async def _command(self, line: str) -> str:
        """Run one slash command through the registry; its lines, or `ToolFailed`."""
        ui = McpFrontEnd()
        async with self.busy:
            ok = await load_commands().dispatch(line, CommandContext(self.services, ui))
        if not ok or ui.failed:
            raise ToolFailed(ui.text or f"{line.split()[0]} failed")
        return ui.text
