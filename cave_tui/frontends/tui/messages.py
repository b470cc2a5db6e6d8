"""The messages the app's workers and other threads post to it (they never touch a widget).

Each carries its domain type (Harlequin's `QueriesExecuted`): a core event, a namespace
change, a load's progress; the domain modules are imported for type checking only.
"""

from __future__ import annotations

from enum import StrEnum
from typing import TYPE_CHECKING

from textual.message import Message

if TYPE_CHECKING:
    from cave_tui.agent.events import Event
    from cave_tui.dataio.progress import Progress
    from cave_tui.runtime.base import NamespaceChange
    from cave_tui.runtime.shipped.summary import VarInfo


class AgentEvent(Message):
    """One core event, posted by the turn worker for the app to render."""

    def __init__(self, event: Event) -> None:
        super().__init__()
        self.event = event


class TurnOutcome(StrEnum):
    """How a turn (or a replay, or a `!` cell) ended."""

    DONE = "done"
    CANCELLED = "cancelled"
    ERROR = "error"


class TurnFinished(Message):
    def __init__(self, outcome: TurnOutcome) -> None:
        super().__init__()
        self.outcome = outcome


class ReplayFinished(Message):
    def __init__(self, report: str, ok: bool) -> None:
        super().__init__()
        self.report = report
        self.ok = ok


class ServicesReady(Message):
    pass


class StartFailed(Message):
    def __init__(self, error: str) -> None:
        super().__init__()
        self.error = error


class CostEstimate(Message):
    def __init__(self, cost: float | None) -> None:
        super().__init__()
        self.cost = cost


class NamespaceRows(Message):
    def __init__(self, rows: list[VarInfo], changed: set[str]) -> None:
        super().__init__()
        self.rows = rows
        self.changed = changed


class NamespaceChanged(Message):
    """The runtime's namespace changed (posted from any thread by the services' hook)."""

    def __init__(self, change: NamespaceChange) -> None:
        super().__init__()
        self.change = change


class ChatNotice(Message):
    """A line for the chat, printed by a command from a thread other than the app's."""

    def __init__(self, text: str, style: str) -> None:
        super().__init__()
        self.text = text
        self.style = style


class LoadProgress(Message):
    """A load's progress (`cave_tui.dataio.Progress`), posted from the loader's thread."""

    def __init__(self, progress: Progress, label: str) -> None:
        super().__init__()
        self.progress = progress
        self.label = label
