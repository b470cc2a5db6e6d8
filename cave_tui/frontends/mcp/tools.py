"""What `cave mcp`'s tools and resources do, over the app layer only (no protocol here).

Each method returns its reply or raises `ToolFailed` with the reason (the server turns it
into an error result). Cells run one at a time, as a protocol client's
(`CellAuthor.CLIENT`): the guard reads them, and the reply is what the model would read
(`shape_result`: head and tail kept, tracebacks kept). `ask` runs a whole turn of cave's
own agent. In approval mode (`approve = "ask"`) each cell is first put to the client's
user (`Questions`); a client that cannot be asked gets a refusal. Every string from the
namespace is returned as printable text (`printable`).
"""

from __future__ import annotations

import asyncio
import shlex
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from cave_tui.agent import events as ev
from cave_tui.agent.approval import ApprovalRequest
from cave_tui.agent.cells import CellAuthor
from cave_tui.agent.observation import cut_middle
from cave_tui.agent.prompt import describe_namespace
from cave_tui.app.commands import CommandContext, load_commands
from cave_tui.frontends.mcp.asking import Consent, NobodyToAsk, Questions
from cave_tui.frontends.mcp.front_end import McpFrontEnd
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices

APPROVAL_MODE = "ask"  # `config.approve`: each cell is approved first
CANNOT_ASK = (
    "Not run: approval mode is on (approve = ask) and {why}; nothing runs without the user's yes."
)
DECLINED = "Not run: the user did not approve this code."
CELL_OUTPUT_SHOWN = 1_000  # characters of each cell's output in `ask`'s reply

Report = Callable[[str], Awaitable[None]]  # a progress message to the client


async def _no_report(message: str) -> None:
    """Progress told to nobody."""


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
class TurnCell:
    """One cell of an `ask` turn: its code and its output (or error), printable."""

    code: str
    output: str = ""
    failed: bool = False


@dataclass
class TurnReply:
    """What an `ask` turn gave: the agent's final answer and the cells it ran."""

    answer: str
    cells: list[TurnCell]
    figures: list[bytes] = field(default_factory=list)

    @property
    def text(self) -> str:
        parts = [self.answer]
        for n, cell in enumerate(self.cells, 1):
            label = "Error" if cell.failed else "Output"
            shown = cut_middle(cell.output.strip("\n"), CELL_OUTPUT_SHOWN)
            code = cell.code.strip("\n")
            parts.append(f"Cell {n}:\n```python\n{code}\n```\n{label}:\n{shown}")
        return "\n\n".join(parts)


@dataclass
class NamespaceTools:
    """The namespace operations of `cave mcp` on one `AppServices` (started by the caller)."""

    services: AppServices
    busy: asyncio.Lock = field(default_factory=asyncio.Lock)  # one cell or command at a time

    async def run(self, code: str, consent: Consent = Consent.NOT_NEEDED) -> CellReply:
        """Run *code* in the live namespace; its outcome as the model would read it, and
        the figures it displayed. `ToolFailed` when approval mode is on and *consent* is
        not `GIVEN`, the guard refuses it or it raises (the traceback in the text)."""
        outcome: ev.Event | None = None
        async with self.busy:
            self._check(consent)
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

    @property
    def approval_on(self) -> bool:
        return self.services.config.approve == APPROVAL_MODE

    def _check(self, consent: Consent) -> None:
        """Return when a cell may run; `ToolFailed` saying why not."""
        if not self.approval_on or consent is Consent.GIVEN:
            return
        if consent is Consent.CANNOT_ASK:
            raise ToolFailed(CANNOT_ASK.format(why=consent.value))
        raise ToolFailed(DECLINED)

    async def ask(
        self, question: str, questions: Questions | None = None, report: Report = _no_report
    ) -> TurnReply:
        """One whole turn of cave's own agent on *question*: its answer and its cells, each
        step and cell told to *report*. Cancelled, the turn is interrupted (its cell too);
        the namespace stays. `ToolFailed` when there is no model, the turn ended without
        an answer, or approval mode is on and the client cannot be asked."""
        asking = questions or NobodyToAsk()
        why = asking.cannot_ask()
        if self.approval_on and why is not None:
            raise ToolFailed(CANNOT_ASK.format(why=why))

        async def approve(request: ApprovalRequest) -> str | None:
            await report(f"asking the user to approve cell {request.step}")
            return request.code if await asking.approve(request.code) else None

        cells: list[TurnCell] = []
        figures: list[bytes] = []
        answer: str | None = None
        failure: str | None = None
        async with self.busy:
            self.services.use_approver(approve)
            try:
                async for event in self.services.stream(question):
                    match event:
                        case ev.StepEvent():
                            await report(f"step {event.step}: asking the model")
                        case ev.CodeEvent():
                            cells.append(TurnCell(printable(event.code)))
                            await report(f"step {event.step}: running cell {len(cells)}")
                        case ev.ExecutionOutputEvent() if cells:
                            cells[-1].output = printable(event.output)
                            figures += event.figures
                        case ev.ExecutionErrorEvent() if cells:
                            cells[-1].output = printable(event.observation or event.content)
                            cells[-1].failed = True
                        case ev.SecurityErrorEvent() if cells:
                            cells[-1].output, cells[-1].failed = printable(event.content), True
                        case ev.FinalResponseEvent():
                            answer = printable(event.content)
                        case ev.MaxStepsReachedEvent():
                            failure = "the turn reached its step limit without an answer"
                        case ev.ErrorEvent():
                            failure = printable(event.content)
            except RuntimeError as exc:  # no model configured
                raise ToolFailed(printable(str(exc))) from None
            finally:
                self.services.use_approver(None)
        if answer is None:
            reply = TurnReply(f"No answer: {failure or 'the turn ended without one'}.", cells)
            raise ToolFailed(reply.text)
        return TurnReply(answer, cells, figures)

    async def list_variables(self) -> str:
        """The namespace as the agent's prompt describes it (bounded)."""
        rows = await self.services.live_runtime.namespace_summary()
        return printable(describe_namespace(rows))

    async def variable_names(self, prefix: str = "") -> list[str]:
        """The namespace's names that start with *prefix*, sorted (the whole listing, past
        the summary's bound), printable only: a name no client could type is left out."""
        rows = await self.services.live_runtime.namespace_listing()
        names = {row.name for row in rows if row.name.startswith(prefix)}
        return sorted(name for name in names if printable(name) == name)

    async def describe(self, name: str) -> str:
        """The detail view of *name* (bounded): type, shape, head, dtypes, describe()."""
        try:
            detail = await self.services.live_runtime.detail(name)
        except KeyError:
            raise NoSuchVariable(f"no variable named {name!r} in the namespace") from None
        return printable(detail.to_markdown())

    async def inject(
        self, path: str, name: str | None = None, questions: Questions | None = None
    ) -> str:
        """`/inject PATH [as NAME]`: load a file (or pkg:MODULE.ATTR) into the namespace;
        its questions (trust a pickle, shadow a name) put to *questions*."""
        line = f"/inject {shlex.quote(path)}" + (f" as {shlex.quote(name)}" if name else "")
        return await self._command(line, questions)

    async def retrieve(
        self, name: str, path: str | None = None, questions: Questions | None = None
    ) -> str:
        """`/retrieve NAME [PATH]`: save a variable to a file; overwrite one only when
        *questions* answer yes."""
        line = f"/retrieve {shlex.quote(name)}" + (f" {shlex.quote(path)}" if path else "")
        return await self._command(line, questions)

    async def _command(self, line: str, questions: Questions | None = None) -> str:
        """Run one slash command through the registry; its lines, or `ToolFailed`."""
        ui = McpFrontEnd(questions or NobodyToAsk())
        async with self.busy:
            ok = await load_commands().dispatch(line, CommandContext(self.services, ui))
        if not ok or ui.failed:
            raise ToolFailed(ui.text or f"{line.split()[0]} failed")
        return ui.text
