"""The approval gate: the user may run, edit or skip each cell before it runs (`approve=`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cave_tui.agent import events as ev
from cave_tui.models.base import Message

SKIPPED_NOTE = "The user chose not to run that code block; it did not run. Continue without it."
SKIPPED_NOTICE = "code skipped by the user"


@dataclass(frozen=True)
class ApprovalRequest:
    """The step the user is asked to approve: the model's *code* at *step* of the turn."""

    code: str
    step: int


@runtime_checkable
class StepApprover(Protocol):
    """An approval hook given the whole step (`ApprovalRequest`), not just its code."""

    async def approve_step(self, request: ApprovalRequest) -> str | None:
        """The code to run (maybe edited), or None to skip it."""
        ...


CodeApprover = Callable[[str], Awaitable[str | None]]  # upstream's hook: the code alone
Approver = CodeApprover | StepApprover


def edited_note(code: str) -> str:
    """Tells the model its code was replaced by the user's edit before it ran."""
    return f"The user edited your code before running it; this ran instead:\n```python\n{code}\n```"


async def gate(
    approve: Approver, code: str, step: int, history: list[Message], chosen: list[str]
) -> AsyncIterator[ev.Event]:
    """Ask *approve* about *code*; the code to run (maybe edited) goes in *chosen*, none if skipped.

    The model is told in *history* when its cell was skipped or edited.
    """
    if isinstance(approve, StepApprover):
        approved = await approve.approve_step(ApprovalRequest(code, step))
    else:
        approved = await approve(code)
    if approved is None:
        history.append({"role": "user", "content": SKIPPED_NOTE})
        yield ev.NoticeEvent(content=SKIPPED_NOTICE, step=step, kind=ev.NoticeKind.CODE_SKIPPED)
        return
    if approved.strip() != code.strip():
        history.append({"role": "user", "content": edited_note(approved)})
        yield ev.CodeEvent(content=approved, code=approved, step=step, source=ev.CodeSource.EDITED)
    else:
        approved = code
    chosen.append(approved)
