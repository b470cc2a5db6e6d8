"""`cave run --json`: one JSON object a line on stdout.

The run's events as `Event.to_dict()` gives them, except a `text` event, whose `content`
is the chunk as the model wrote it (its `prose` the part outside code blocks); before them
a `session` line names the recorded session, and a `status` line ends every run.
"""

from __future__ import annotations

import json
import sys
from dataclasses import dataclass
from enum import StrEnum

from cave_tui.agent import events as ev


class RunLine(StrEnum):
    """The `type` of the lines `cave run --json` adds to the agent's events."""

    SESSION = "session"
    STATUS = "status"


class RunOutcome(StrEnum):
    """How a `cave run` ended, as its `status` line says."""

    COMPLETED = "completed"
    MAX_STEPS_REACHED = "max_steps_reached"
    ERROR = "error"
    INTERRUPTED = "interrupted"


INTERRUPTED_STATUSES = frozenset({"cancelled", "terminated", "interrupted"})


@dataclass(frozen=True)
class SessionLine:
    """The run's recorded session: its id and folder."""

    session: str
    dir: str

    def to_dict(self) -> dict[str, str]:
        return {"type": RunLine.SESSION.value, "session": self.session, "dir": self.dir}


@dataclass(frozen=True)
class StatusLine:
    """The run's end: its outcome and the exit code `cave run` returns."""

    status: RunOutcome
    exit_code: int

    @classmethod
    def of(cls, status: str, exit_code: int) -> StatusLine:
        """From the run's status word (an `AgentStatus` value, `cancelled`, …) and exit code."""
        if status in INTERRUPTED_STATUSES or exit_code >= 128:
            return cls(RunOutcome.INTERRUPTED, exit_code)
        if exit_code == 0:
            return cls(RunOutcome.COMPLETED, exit_code)
        if status == RunOutcome.MAX_STEPS_REACHED.value:
            return cls(RunOutcome.MAX_STEPS_REACHED, exit_code)
        return cls(RunOutcome.ERROR, exit_code)

    def to_dict(self) -> dict[str, str | int]:
        return {
            "type": RunLine.STATUS.value,
            "status": self.status.value,
            "exit_code": self.exit_code,
        }


def event_dict(event: ev.Event) -> dict[str, object]:
    """*event* as its JSON line: a text chunk's `content` is its text as written."""
    data = event.to_dict()
    if isinstance(event, ev.TextEvent):
        data.pop("raw", None)
        data["prose"] = event.content
        data["content"] = event.written
    return data


def write_line(item: ev.Event | SessionLine | StatusLine) -> None:
    """Print *item* as one JSON line on stdout, flushed."""
    data = event_dict(item) if isinstance(item, ev.Event) else item.to_dict()
    sys.stdout.write(json.dumps(data, default=str) + "\n")
    sys.stdout.flush()
