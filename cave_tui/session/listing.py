"""What `/sessions` and `cave sessions` list: one `SessionSummary` a session, newest first.

A summary reads only the session's `meta.json` and its last snapshot's `manifest.json`,
both as bounded regular files (`read_regular`: never a link, a FIFO or a huge file) and as
JSON only: nothing is unpickled. Only the sessions shown are read. What cannot be read
(bad JSON, a file over its limit, a field of the wrong type) leaves its field empty and
says why in `note`; every string listed is printable text on one line.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path

from cave_tui.dataio.bounded_read import MIB, read_regular
from cave_tui.dataio.dump import MANIFEST
from cave_tui.printable import printable_line
from cave_tui.session.store import (
    BUNDLED_PREFIX,
    EVENTS,
    META,
    NAMESPACE,
    is_session_dir,
    pid_alive,
)
from cave_tui.session.title import shown_title

LISTED = 20  # sessions listed unless all are asked for
META_READ_LIMIT = 1 * MIB  # a meta.json cave writes is a few KB
MANIFEST_READ_LIMIT = 8 * MIB  # ~350 bytes a variable: over 20,000 variables
FIELD_LIMIT = 80  # characters of a model name or a status listed


@dataclass(frozen=True)
class SessionSummary:
    """One listed session. *variables*/*turns*/*model* are None when unknown; *note* says
    what could not be read."""

    id: str
    path: Path
    title: str
    updated: float  # seconds since the epoch: the last write to its log or metadata
    turns: int | None
    variables: int | None
    model: str | None
    status: str
    note: str | None = None

    @property
    def when(self) -> str:
        """The last update in local time, `YYYY-MM-DD HH:MM`."""
        return time.strftime("%Y-%m-%d %H:%M", time.localtime(self.updated))

    def facts(self) -> str:
        """`3 turns · 5 variables · MODEL · completed`, leaving out what is unknown."""
        parts = []
        if self.turns is not None:
            parts.append(f"{self.turns} turn" + ("" if self.turns == 1 else "s"))
        if self.variables is not None:
            parts.append(f"{self.variables} variable" + ("" if self.variables == 1 else "s"))
        parts.append(self.model or "no model")
        parts.append(self.status)
        return " · ".join(parts)

    def to_json(self) -> dict[str, object]:
        """The summary as JSON data (`cave sessions --json`)."""
        local = time.localtime(self.updated)
        return {
            "id": self.id,
            "title": self.title,
            "updated": time.strftime("%Y-%m-%dT%H:%M:%S%z", local),
            "turns": self.turns,
            "variables": self.variables,
            "model": self.model,
            "status": self.status,
            "path": str(self.path.absolute()),
            "note": self.note,
        }


@dataclass(frozen=True)
class SessionListing:
    """The sessions listed (newest first) and how many there are in all."""

    root: Path
    sessions: list[SessionSummary]
    total: int


def list_sessions(
    root: Path, *, limit: int | None = LISTED, include_bundled: bool = True
) -> SessionListing:
    """The *limit* most recently updated sessions under *root* (all with None), newest first."""
    found: list[tuple[float, str, Path]] = []
    with contextlib.suppress(OSError):
        for entry in root.iterdir():
            if not is_session_dir(entry):
                continue
            if not include_bundled and entry.name.startswith(BUNDLED_PREFIX):
                continue
            updated = 0.0
            for name in (EVENTS, META):
                with contextlib.suppress(OSError):
                    updated = max(updated, (entry / name).lstat().st_mtime)
            found.append((updated, entry.name, entry))
    found.sort(reverse=True)
    shown = found if limit is None else found[:limit]
    rows = [summarize(path, updated) for updated, _, path in shown]
    return SessionListing(root, rows, len(found))


def summarize(folder: Path, updated: float) -> SessionSummary:
    """The summary of the session in *folder* (see the module docstring)."""
    notes: list[str] = []
    meta = _read_json(folder / META, META_READ_LIMIT, notes)
    variables = _count_variables(folder / NAMESPACE / MANIFEST, notes)
    name = printable_line(folder.name)
    if name != folder.name:
        notes.append("the folder's name holds control characters")
    status = _text(meta.get("status"), "status", notes) or "?"
    if status == "running" and not pid_alive(meta.get("pid")):
        status = "interrupted"
    return SessionSummary(
        id=name,
        path=folder,
        title=shown_title(meta.get("title"), folder.name),
        updated=updated,
        turns=_count(meta.get("turns"), "turns", notes) if meta else None,
        variables=variables,
        model=_text(meta.get("model"), "model", notes),
        status=status,
        note="; ".join(notes) or None,
    )


def _read_json(path: Path, limit: int, notes: list[str]) -> dict[str, object]:
    """The JSON object in *path*; {} (with a note) when it is missing, unsafe or not one."""
    try:
        data = json.loads(read_regular(path, limit).decode("utf-8"))
    except FileNotFoundError:
        notes.append(f"no {path.name}")
        return {}
    except OSError as exc:  # a link, a FIFO, over the limit, unreadable
        notes.append(f"{path.name} not read: {exc.strerror or exc}")
        return {}
    except (ValueError, RecursionError):  # not UTF-8, not JSON, nested too deep
        notes.append(f"{path.name} is not valid JSON")
        return {}
    if not isinstance(data, dict):
        notes.append(f"{path.name} is not a JSON object")
        return {}
    return data


def _count_variables(manifest: Path, notes: list[str]) -> int | None:
    """How many variables the last snapshot holds (its manifest's entries); None without one."""
    seen: list[str] = []
    data = _read_json(manifest, MANIFEST_READ_LIMIT, seen)
    if seen:  # no snapshot was taken (nothing to say), or it cannot be read
        if seen != [f"no {MANIFEST}"]:
            notes.extend(f"snapshot {note}" for note in seen)
        return None
    variables = data.get("variables")
    if not isinstance(variables, list):
        notes.append("snapshot manifest.json lists no variables")
        return None
    return len(variables)


def _count(value: object, field: str, notes: list[str]) -> int | None:
    if value is None:
        return 0
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    notes.append(f"meta.json {field} is not a count")
    return None


def _text(value: object, field: str, notes: list[str]) -> str | None:
    if value is None or value == "":
        return None
    if not isinstance(value, str):
        notes.append(f"meta.json {field} is not text")
        return None
    text = printable_line(value).strip()
    return text if len(text) <= FIELD_LIMIT else text[: FIELD_LIMIT - 1] + "…"
