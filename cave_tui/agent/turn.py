"""`Turn`: everything one user turn has done so far, fresh for each turn.

The loop records each cell here; policies (agent/policies/) read it to decide whether
to intervene. Nothing in it outlives the turn, so no state leaks into the next one.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from cave_tui.agent.conversation import Conversation
from cave_tui.agent.events import AnswerSupport
from cave_tui.models.base import Message
from cave_tui.runtime.base import ExecutionResult, Runtime
from cave_tui.runtime.shipped.summary import VarInfo


def normalize_code(code: str) -> str:
    """*code* with trailing spaces and blank edges removed: resends compare equal."""
    return "\n".join(line.rstrip() for line in code.strip().splitlines())


@dataclass
class CellRecord:
    """One cell the model sent this turn, whether it ran or was refused."""

    code: str
    result: ExecutionResult
    step: int
    ran: bool = True  # False: a policy refused it, or the user skipped it
    hints: list[str] = field(default_factory=list)  # added to its observation on failure
    # The conversation's messages of the exchange (the reply and its observation), by
    # identity: a rewind keeps the ones of cells that ran without error.
    messages: list[Message] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return self.ran and self.result.success

    @property
    def failed(self) -> bool:
        return self.ran and not self.result.success

    @property
    def normalized(self) -> str:
        return normalize_code(self.code)


@dataclass
class Answer:
    """An answer about to be accepted: a reply without code, or a cell's final_answer()."""

    text: str
    cell: CellRecord | None = None  # the cell that called final_answer(), if any


class Turn:
    """The state of the user turn in progress; the loop makes a new one per turn."""

    def __init__(self, task: str, request: Message, conversation: Conversation, runtime: Runtime):
        self.task = task  # the user's words, never rewritten
        self.request = request  # its message in the conversation (a rewind replaces it)
        self.conversation = conversation  # the agent's, shared
        self.runtime = runtime
        self.cells: list[CellRecord] = []
        self.doubted = False  # an answer was questioned: asked once per turn
        self.led = False  # a policy's reply lead was shown (once per turn)
        self.held_answer: str | None = None  # a looked-at answer, until a cell runs again
        self.rewinds = 0
        self.rewound_at = 0  # len(cells) at the last rewind
        self.resample = 0  # >0: the next model call samples (a stuck model resent its code)
        self.memo: dict[str, Any] = {}  # policies' own per-turn notes, by policy name
        self.tips: list[str] = []  # the policies' tips for the next model call
        self.tips_shown: set[str] = set()  # each is shown to the user once per turn
        self._rows: list[VarInfo] | None = None
        self.before: frozenset[str] | None = None  # names defined when the turn began

    def take_held_answer(self) -> str | None:
        """The answer a look held, once: a plain-text reply after the look confirmed it, and
        it is the turn's answer (the reply stays the model's prose)."""
        held, self.held_answer = self.held_answer, None
        return held

    async def rows(self) -> list[VarInfo]:
        """The namespace summary, fetched once until the next cell runs."""
        if self._rows is None:
            try:
                self._rows = await self.runtime.namespace_summary()
            except Exception:
                self._rows = []
            if self.before is None:
                self.before = frozenset(row.name for row in self._rows)
        return self._rows

    def record(self, cell: CellRecord) -> None:
        """Add a cell; a cell that ran makes the cached summary stale, and a held answer
        (the results it stood on may have changed) is dropped."""
        self.cells.append(cell)
        self.held_answer = None
        if cell.ran:
            self._rows = None

    def given(self) -> set[str]:
        """Names of what the user gave the runtime (any injected name, for a runtime of the
        user's own without `given_names`)."""
        names = getattr(self.runtime, "given_names", None)
        return names() if callable(names) else set(getattr(self.runtime, "injected", {}))

    @property
    def ran(self) -> list[str]:
        """The code of this turn's cells that ran without error, in order."""
        return [cell.code for cell in self.cells if cell.ok]

    @property
    def stored(self) -> set[str]:
        """Names that cells which ran without error bound or changed this turn."""
        return {name for cell in self.cells if cell.ok for name in cell.result.changed}

    @property
    def last(self) -> CellRecord | None:
        return self.cells[-1] if self.cells else None

    @property
    def last_failure(self) -> CellRecord | None:
        """The newest cell that ran, when it failed."""
        ran = [cell for cell in self.cells if cell.ran]
        return ran[-1] if ran and ran[-1].failed else None

    @property
    def support(self) -> AnswerSupport:
        """What backs an answer given now: CELL when the newest cell that ran succeeded,
        NO_CODE when the turn sent no code, else NONE (its last cell failed, or none ran)."""
        if not self.cells:
            return AnswerSupport.NO_CODE
        ran = [cell for cell in self.cells if cell.ran]
        return AnswerSupport.CELL if ran and ran[-1].ok else AnswerSupport.NONE

    @property
    def failed_in_row(self) -> int:
        """Failed cells since the last one that ran without error (or the last rewind)."""
        count = 0
        for cell in reversed(self.cells[self.rewound_at :]):
            if cell.ok:
                break
            count += cell.failed
        return count

    def refuse(
        self, code: str, step: int, note: str, retract: bool = False, rewound: bool = False
    ) -> None:
        """Record a cell a policy did not run and feed *note* back (unless the turn was just
        rewound). *retract* drops the model's reply and puts the note on the observation
        before it: fed back, a resent copy makes the next reply copy it once more."""
        self.record(CellRecord(code, ExecutionResult(success=False), step, ran=False))
        if rewound:
            return
        if not (retract and self.conversation.retract_reply(note)):
            self.conversation.add_note(note)

    def rewind(self, request: str) -> bool:
        """Drop the turn's exchanges but those of cells that ran without error, and replace
        the request's text with *request*. False when compaction replaced the request."""
        kept = [m for cell in self.cells if cell.ok for m in cell.messages]
        new = self.conversation.rewind(self.request, kept, request)
        if new is None:
            return False
        self.request = new
        self.rewinds += 1
        self.rewound_at = len(self.cells)
        return True
