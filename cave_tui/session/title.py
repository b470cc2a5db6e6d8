"""A session's title: the first line of its first request, as printable text on one line.

A title is set once, from the first thing the user asked (a task, a `!` cell, a slash
command), unless one was given (`/save TITLE`). Sessions recorded before titles existed
carry a placeholder (`cave`, `cave acp`…) or none: `shown_title` falls back to the words of
the folder's name, or to `NO_TITLE`.
"""

from __future__ import annotations

import re

from cave_tui.printable import printable_line

TITLE_LIMIT = 60  # characters of a title; a longer first line ends with "…"
NO_TITLE = "—"
# What older versions stored as a title when the user had asked nothing yet.
PLACEHOLDERS = frozenset({"", "cave", "cave acp", "cave mcp", "session"})
_FOLDER_STAMP = re.compile(r"^\d{8}-\d{6}-")
_SPACES = re.compile(r"\s+")


def session_title(text: str, *, limit: int = TITLE_LIMIT) -> str:
    """The first non-blank line of *text*, printable, spaces collapsed, at most *limit*
    characters (cut with "…"); "" when there is none."""
    for line in text.splitlines():
        title = _SPACES.sub(" ", printable_line(line)).strip()
        if title:
            return title if len(title) <= limit else title[: limit - 1].rstrip() + "…"
    return ""


def has_title(title: object, folder_name: str = "") -> bool:
    """Whether *title* (a meta.json value) is a real title, not a placeholder or the
    folder's name (what a rebuilt meta.json held)."""
    return isinstance(title, str) and title.strip() not in PLACEHOLDERS and title != folder_name


def shown_title(title: object, folder_name: str) -> str:
    """The title to list: *title* made printable on one line, else the words of the folder's
    name after its time stamp (`20260101-120000-plot-flights`: "plot flights"), else "—"."""
    if has_title(title, folder_name):
        return session_title(printable_line(str(title))) or NO_TITLE
    slug = _FOLDER_STAMP.sub("", folder_name)
    words = session_title(slug.replace("-", " "))
    return NO_TITLE if words in PLACEHOLDERS else words
