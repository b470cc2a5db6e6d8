"""The approval gate: the user may run, edit or skip each cell before it runs (`approve=`)."""

from __future__ import annotations

from collections.abc import AsyncIterator, Awaitable, Callable
from dataclasses import dataclass

from cave_tui.agent import events as ev
from cave_tui.agent.conversation import Conversation

SKIPPED_NOTE = "The user chose not to run that code block; it did not run. Continue without it."
SKIPPED_NOTICE = "code skipped by the user"

Approver = Callable[[str], Awaitable[str | None]]


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
