"""The transcript of a recorded session: the events a front end draws to show it again.

Resume and `/load` use it so the chat and the log come back as they were: the user's
messages, each step's reply (recorded whole, as it was streamed), its code and outcome,
notices, the answers. Records that are not events a front end draws (messages, usage,
snapshots, injections) are left out.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.session.figures import resolve_figures

# Events recorded in the log that a front end draws, besides the replies.
DRAWN = {
    ev.EventType.USER,
    ev.EventType.CODE,
    ev.EventType.EXECUTION_OUTPUT,
    ev.EventType.EXECUTION_ERROR,
    ev.EventType.SECURITY_ERROR,
    ev.EventType.FINAL_RESPONSE,
    ev.EventType.MAX_STEPS_REACHED,
    ev.EventType.ERROR,
    ev.EventType.CANCELLED,
    ev.EventType.NOTICE,
    ev.EventType.COMPACTED,
    ev.EventType.INTERVENTION,
}


UNFINISHED = "did not finish: cave stopped while it ran"


def transcript(records: Iterable[dict[str, Any]], folder: Path | None = None) -> list[ev.Event]:
    """The drawable events of a session's records, in order. A `!` cell with no outcome
    record (cave stopped while it ran) is shown interrupted, never still running. With the
    session's *folder*, a cell's saved figures are named for the front end to show."""
    events: list[ev.Event] = []
    unfinished: dict[int, int] = {}  # a user cell's number -> its code event's index
    for record in records:
        if record.get("type") == "reply":
            text = str(record.get("text") or "")
            if text:
                events.append(ev.TextEvent(content=text, step=int(record.get("step") or 0)))
            continue
        event = ev.event_from_dict(record)
        if event is not None and event.type in DRAWN:
            if event.agent == ev.USER_AGENT and isinstance(record.get("cell"), int):
                if event.type is ev.EventType.CODE:
                    unfinished[record["cell"]] = len(events)
                else:
                    unfinished.pop(record["cell"], None)
            events.append(event)
    for index in sorted(unfinished.values(), reverse=True):
        stopped = ev.ExecutionErrorEvent(
            content=UNFINISHED, error=UNFINISHED, agent=ev.USER_AGENT, interrupted=True
        )
        events.insert(index + 1, stopped)
    if folder is not None:
        resolve_figures(events, folder)
    return events
