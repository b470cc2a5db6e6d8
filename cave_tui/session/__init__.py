"""Sessions: record every run to `sessions/<timestamp>-<slug>/`, resume, replay, export.

Headless: never imports Textual. `SessionRecorder` subscribes to an agent's events;
`resume_session` rebuilds history and namespace; `replay_session` re-runs the
recorded replies against a fresh runtime and diffs the outputs; `export_session`
writes `.ipynb` or `.py`.
"""

from __future__ import annotations

from cave_tui.session.export import export_session, to_notebook, to_script
from cave_tui.session.log import EventLog, read_records
from cave_tui.session.reader import (
    SessionData,
    read_session,
    rebuild_history,
    recorded_turns,
)
from cave_tui.session.recorder import SessionRecorder
from cave_tui.session.replay import Divergence, ReplayError, ReplayResult, replay_session
from cave_tui.session.resume import ResumeResult, check_snapshot, resume_session
from cave_tui.session.store import SessionError, SessionInfo, SessionStore

__all__ = [
    "Divergence",
    "EventLog",
    "ReplayError",
    "ReplayResult",
    "ResumeResult",
    "SessionData",
    "SessionError",
    "SessionInfo",
    "SessionRecorder",
    "SessionStore",
    "check_snapshot",
    "export_session",
    "read_records",
    "read_session",
    "rebuild_history",
    "recorded_turns",
    "replay_session",
    "resume_session",
    "to_notebook",
    "to_script",
]
