"""The approval gate: the user may run, edit or skip each cell before it runs (`approve=`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass
from typing import Protocol, runtime_checkable

from cave_tui.agent import events as ev
from cave_tui.agent.conversation import Conversation

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


@dataclass(frozen=True)
class Approved:
    """`gate`'s last item when the cell is to run: its code (the model's, or the user's edit)."""

    code: str


async def gate(
    approve: Approver, code: str, step: int, conversation: Conversation
) -> AsyncIterator[ev.Event | Approved]:
    """Ask *approve* about *code*: its events, then `Approved` unless the user skipped it.

    The model is told in *conversation* when its cell was skipped or edited.
    """
    if isinstance(approve, StepApprover):
        approved = await approve.approve_step(ApprovalRequest(code, step))
    else:
        approved = await approve(code)
    if approved is None:
        conversation.add_note(SKIPPED_NOTE)
        yield ev.NoticeEvent(content=SKIPPED_NOTICE, step=step, kind=ev.NoticeKind.CODE_SKIPPED)
        return
    if approved.strip() != code.strip():
        conversation.add_note(edited_note(approved))
        yield ev.CodeEvent(content=approved, code=approved, step=step, source=ev.CodeSource.EDITED)
    else:
        approved = code
    yield Approved(approved)
