"""Where sessions live: `<root>/<timestamp>-<slug>/` folders, found by ID, prefix or `last`.

Each session folder holds `events.jsonl` (the log), `meta.json` (rewritten atomically),
`namespace/` (the latest namespace snapshot, a dump with a manifest) and
`retrieved/` (the default target of `/retrieve`).
"""

from __future__ import annotations

import contextlib
import json
import os
import re
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cave_tui.dataio.atomic import atomic_write_text
from cave_tui.dataio.bounded_read import META_LIMIT, read_regular

EVENTS = "events.jsonl"
META = "meta.json"
NAMESPACE = "namespace"
RETRIEVED = "retrieved"
DEFAULT_ROOT = "sessions"
BUNDLED_PREFIX = "demo-"


class SessionError(Exception):
    """A session could not be found, read or written; the message says which and why."""


def slugify(text: str, limit: int = 40) -> str:
    words = re.findall(r"[a-z0-9]+", text.lower())
    slug = ""
    for word in words:
        candidate = f"{slug}-{word}" if slug else word
        if len(candidate) > limit:
            break
        slug = candidate
    return slug or "session"


def read_meta(folder: Path) -> dict[str, Any]:
    """The session's metadata; {} when it is missing or unreadable (a link, a FIFO, not
    JSON...): it is rewritten whole at the next update."""
    try:
        data = json.loads(read_regular(folder / META, META_LIMIT).decode("utf-8"))
        return data if isinstance(data, dict) else {}
    except (OSError, json.JSONDecodeError, UnicodeDecodeError, RecursionError):
        return {}


def write_meta(folder: Path, meta: dict[str, Any], *, sync: bool = True) -> None:
    text = json.dumps(meta, indent=2, ensure_ascii=False, default=str) + "\n"
    atomic_write_text(folder / META, text, sync=sync)


@dataclass
class SessionInfo:
    """One row of `/sessions`."""

    id: str
    path: Path
    meta: dict[str, Any]
    updated: float

    @property
    def title(self) -> str:
        return str(self.meta.get("title") or "")

    @property
    def turns(self) -> int:
        return int(self.meta.get("turns") or 0)

    @property
    def status(self) -> str:
        status = str(self.meta.get("status") or "?")
        if status == "running" and not pid_alive(self.meta.get("pid")):
            return "interrupted"
        return status


def pid_alive(pid: Any) -> bool:
    """Whether a process with this id runs (a session marked running may have been killed)."""
    if not isinstance(pid, int) or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def is_session_dir(path: Path) -> bool:
    return path.is_dir() and ((path / EVENTS).exists() or (path / META).exists())


class SessionStore:
    """The sessions under one root folder (default `./sessions`)."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root or DEFAULT_ROOT).expanduser()

    def new_dir(self, title: str = "session") -> Path:
        """Create `<root>/<YYYYmmdd-HHMMSS>-<slug>/` (unique) and return it."""
        try:
            self.root.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise SessionError(f"cannot create the sessions folder {self.root}: {exc}") from None
        base = f"{time.strftime('%Y%m%d-%H%M%S')}-{slugify(title)}"
        for n in range(1, 1000):
            folder = self.root / (base if n == 1 else f"{base}-{n}")
            try:
                folder.mkdir()
            except FileExistsError:
                continue
            except OSError as exc:
                raise SessionError(f"cannot create the session folder {folder}: {exc}") from None
            return folder
        raise SessionError(f"cannot find a free session folder name under {self.root}")

    def list(self, *, include_bundled: bool = True) -> list[SessionInfo]:
        """Sessions, most recently updated last."""
        rows: list[SessionInfo] = []
        if not self.root.is_dir():
            return rows
        for entry in self.root.iterdir():
            if not is_session_dir(entry):
                continue
            if not include_bundled and entry.name.startswith(BUNDLED_PREFIX):
                continue
            updated = 0.0
            for name in (EVENTS, META):
                with contextlib.suppress(OSError):
                    updated = max(updated, (entry / name).stat().st_mtime)
            rows.append(SessionInfo(entry.name, entry, read_meta(entry), updated))
        rows.sort(key=lambda r: (r.updated, r.id))
        return rows

    def resolve(self, ref: str | Path) -> Path:
        """A session folder from an ID, a unique ID prefix, `last`, or a path."""
        text = str(ref).strip()
        if text in ("", "last"):
            rows = self.list(include_bundled=False)
            if not rows:
                raise SessionError(f"no sessions to resume in {self.root}")
            return rows[-1].path
        path = Path(text).expanduser()
        if is_session_dir(path):
            return path
        direct = self.root / text
        if is_session_dir(direct):
            return direct
        matches = [r.path for r in self.list() if r.id.startswith(text)]
        if len(matches) == 1:
            return matches[0]
        if len(matches) > 1:
            names = ", ".join(m.name for m in matches[:5])
            raise SessionError(f"session {text!r} is ambiguous: {names}")
        raise SessionError(f"no session {text!r} in {self.root} (see /sessions)")
