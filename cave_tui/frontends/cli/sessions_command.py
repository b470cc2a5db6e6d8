"""`cave sessions`: the recorded sessions, newest first, as text or JSON (`--json`).

What is listed and how hostile session folders are read is `cave_tui.session.listing`'s;
this only prints it. Every string printed is printable text (`printable_line`).
"""

from __future__ import annotations

import json
from pathlib import Path

import typer

from cave_tui.printable import printable_line


def list_sessions_command(sessions_dir: Path | None, *, show_all: bool, as_json: bool) -> int:
    """Print the sessions under *sessions_dir* (./sessions); the exit code (0)."""
    from cave_tui.session.listing import LISTED, list_sessions
    from cave_tui.session.resume_line import resume_command
    from cave_tui.session.store import DEFAULT_ROOT

    root = (sessions_dir or Path(DEFAULT_ROOT)).expanduser()
    listing = list_sessions(root, limit=None if show_all else LISTED)
    where = None if sessions_dir is None else root.absolute()
    if as_json:
        rows = [
            {**row.to_json(), "resume": resume_command(row.id, where)} for row in listing.sessions
        ]
        data = {"root": str(root.absolute()), "total": listing.total, "sessions": rows}
        typer.echo(json.dumps(data, indent=2, ensure_ascii=False))
        return 0
    shown_root = printable_line(str(root))
    if not listing.sessions:
        typer.echo(f"No sessions in {shown_root}.")
        return 0
    shown = len(listing.sessions)
    more = "" if shown == listing.total else f"; {shown} of {listing.total}, --all lists all"
    lines = [f"Sessions in {shown_root} (newest first{more}):", ""]
    width = max(len(row.id) for row in listing.sessions)  # the dates in one column
    for row in listing.sessions:
        lines.append(f"{row.id:<{width}}  {row.when}")
        lines.append(f"    {row.title} · {row.facts()}")
        if row.note:
            lines.append(f"    ({row.note})")
    newest = listing.sessions[0].id
    lines += ["", f"Resume one with: {resume_command(newest, where)}"]
    typer.echo("\n".join(lines))
    return 0
