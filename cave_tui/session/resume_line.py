"""The exact command line that opens a recorded session again, said when cave exits."""

from __future__ import annotations

import shlex
from pathlib import Path


def resume_command(session_id: str, sessions_dir: Path | None = None, *, run: bool = False) -> str:
    """`cave --resume ID` (with `--sessions-dir DIR` when the sessions are not in ./sessions);
    with *run*, `cave run --resume ID "NEXT TASK"`, the one-shot form."""
    where = f" --sessions-dir {shlex.quote(str(sessions_dir))}" if sessions_dir else ""
    head = "cave run" if run else "cave"
    task = ' "NEXT TASK"' if run else ""
    return f"{head} --resume {shlex.quote(session_id)}{where}{task}"
