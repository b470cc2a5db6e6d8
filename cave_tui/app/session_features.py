"""The session part of `AppServices`: the recording (one source of truth) and the
`SessionFeatures` protocol the session/data features implement (`startup.DataFeatures`)
to plug into a front-end session: start-up, each turn's events, the user's own cells, exit
and its dump.
Never imports Textual."""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.session import SessionRecorder


class SessionFeatures(Protocol):
    """What a session feature does at each point of a front-end session."""

    async def on_ready(self) -> None:
        """The runtime is up: resume or start the recording, pre-seed the namespace."""
        ...

    def cancel_loads(self) -> bool:
        """Cancel the start-up's loads under way (the start goes on); False when none runs."""
        ...

    def stream(self, task: str) -> AsyncIterator[ev.Event]:
        """A turn's events (through the recorder)."""
        ...

    def on_event(self, event: ev.Event) -> None:
        """Every event a front end consumes (the user's own cells are recorded here)."""
        ...

    async def on_exit(self) -> None:
        """The front end quits: dump, then close the recording."""
        ...

    def leave_now(self, reason: str) -> None:
        """A second quit request during the exit: close what must be closed at once."""
        ...

    @property
    def dump_pending(self) -> bool:
        """An exit dump is asked for and not written yet."""
        ...

    async def dump_now(self) -> bool:
        """Write the exit dump now; False when it failed (`dump_failure` says why)."""
        ...

    def dump_failure(self) -> str:
        """What to tell the user when the dump failed: why, and where the data still is."""
        ...

    def exit_code(self, code: int) -> int:
        """The process's exit code for the front end's *code* (a failed dump changes it)."""
        ...


@dataclass
class SessionState:
    """The recording of this front-end session: the one place it is held."""

    recorder: SessionRecorder | None = None  # None: nothing recorded (yet)
    sessions_dir: Path | None = None  # where sessions are recorded and listed
    transcript: list[ev.Event] = field(default_factory=list)  # a resumed session's events
