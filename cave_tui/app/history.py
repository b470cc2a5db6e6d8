"""Input history kept across runs, in prompt_toolkit's `FileHistory` format.

The app and `cave --plain` share one file (`config.history_path()`): the REPL
uses prompt_toolkit's own `FileHistory` on it, the app this small reader/writer,
which avoids importing prompt_toolkit at app start.
"""

from __future__ import annotations

import datetime
from pathlib import Path

MAX_ENTRIES = 2000


def read_history(path: Path) -> list[str]:
    """Entries oldest first (a missing or unreadable file is an empty history)."""
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    entries: list[str] = []
    lines: list[str] = []
    for line in text.splitlines():
        if line.startswith("+"):
            lines.append(line[1:])
        elif lines:
            entries.append("\n".join(lines))
            lines = []
    if lines:
        entries.append("\n".join(lines))
    return entries[-MAX_ENTRIES:]


def append_history(path: Path, entry: str) -> None:
    """Add one entry; failures (read-only home, full disk) are ignored: history is a comfort."""
    stamp = datetime.datetime.now().isoformat(sep=" ")
    block = f"\n# {stamp}\n" + "".join(f"+{line}\n" for line in entry.split("\n"))
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with path.open("a", encoding="utf-8") as handle:
            handle.write(block)
    except OSError:
        pass


class InputHistory:
    """Up/down navigation over past entries, with the unsent draft kept at the bottom."""

    def __init__(self, path: Path | None) -> None:
        self.path = path
        self._entries: list[str] | None = None
        self._index: int | None = None  # None: editing the draft
        self._draft = ""

    @property
    def entries(self) -> list[str]:
        if self._entries is None:
            self._entries = read_history(self.path) if self.path else []
        return self._entries

    def add(self, entry: str) -> None:
        self._index = None
        self._draft = ""
        if not entry.strip():
            return
        entries = self.entries
        if entries and entries[-1] == entry:
            return
        entries.append(entry)
        if self.path is not None:
            append_history(self.path, entry)

    def previous(self, current: str) -> str | None:
        entries = self.entries
        if not entries:
            return None
        if self._index is None:
            self._draft = current
            self._index = len(entries) - 1
        elif self._index > 0:
            self._index -= 1
        else:
            return None
        return entries[self._index]

    def next(self) -> str | None:
        if self._index is None:
            return None
        if self._index < len(self.entries) - 1:
            self._index += 1
            return self.entries[self._index]
        self._index = None
        return self._draft
