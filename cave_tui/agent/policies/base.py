"""The policy protocol: anything that intervenes in a turn, and what it can do.

A policy sees the turn at four points and may return one `Intervention`:

- `before_request`: a TIP, text added under the namespace of the next model call;
- `before_cell`: a REFUSE (the cell does not run; the text is fed back), a REWIND, or a
  REWRITE (`code` runs in the cell's place; the text joins its observation);
- `after_cell`: a HINT or a KEEP (text added to the cell's observation) or a REWIND;
- `before_answer`: a DOUBT (the answer is not accepted yet; the text is fed back).

A policy may also begin every model reply (`reply_lead`, a LEAD shown once per turn) where
the model continues a reply it is given.

Subclass `BasePolicy` and override the points you need; pass instances to
`CaveAgent(policies=[...])`. Every intervention reaches the user as an event.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Protocol, runtime_checkable

from cave_tui.agent.events import InterventionKind
from cave_tui.agent.turn import Answer, CellRecord, Turn

__all__ = ["AgentPolicy", "BasePolicy", "Intervention", "InterventionKind"]


@dataclass(frozen=True)
class Intervention:
    """One policy's act on a turn. `text` is what the model is told.

    REFUSE, or DOUBT of a reply without code: `retract` drops the model's reply from its
    context (the note goes on the previous message instead); REFUSE: `resample` makes the
    next call sample.
    REWIND: `request` is the request's new text.
    REWRITE: `code` is what runs in place of the model's cell.
    DOUBT of an answer given in a cell: `holds` keeps that answer, to stand if the model's
    next reply confirms it in plain text (a look at what it stands on).
    """

    policy: str
    kind: InterventionKind
    text: str
    retract: bool = False
    resample: bool = False
    request: str = ""
    holds: bool = False
    code: str = ""


@runtime_checkable
class AgentPolicy(Protocol):
    """Anything that may intervene in a turn (see the module docstring)."""

    name: str

    async def before_request(self, turn: Turn) -> Intervention | None: ...

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None: ...

    async def after_cell(self, turn: Turn, cell: CellRecord) -> Intervention | None: ...

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None: ...


class BasePolicy:
    """A policy that does nothing: override the points you need, set `name`."""

    name: ClassVar[str] = "policy"
    # An answer is questioned once per turn, by every policy that doubts it then. True: this
    # policy may also question an answer after the turn's first doubt (once, by its own
    # count), for a check of the answer's form that the first doubt's answer may still fail.
    asks_after_a_doubt: ClassVar[bool] = False
    # Text each model reply of a turn begins with, where the model continues a reply
    # (`Model.continues_reply`); `{python_block_identifier}` is filled in. "": none.
    reply_lead: ClassVar[str] = ""

    async def before_request(self, turn: Turn) -> Intervention | None:
        return None

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        return None

    async def after_cell(self, turn: Turn, cell: CellRecord) -> Intervention | None:
        return None

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        return None

    def act(self, kind: InterventionKind, text: str, **kwargs: object) -> Intervention:
        """An intervention of this policy."""
        return Intervention(self.name, kind, text, **kwargs)  # type: ignore[arg-type]

    def joined(self, kind: InterventionKind, notes: list[str]) -> Intervention | None:
        """One intervention of *notes*, one per line; None when there are none."""
        return self.act(kind, "\n".join(notes)) if notes else None

    def __repr__(self) -> str:
        return f"<policy {self.name}>"
