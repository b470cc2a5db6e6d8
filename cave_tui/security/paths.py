"""Classify string literals that name files: inside the working directory, or not.

A path or URL in a string is data until it reaches a call that opens it; these helpers
let the I/O rule tell a relative file under the working directory from everything else.
"""

from __future__ import annotations

import re

from cave_tui.security.lists import FILE_NAME, PATH_PREFIX

_SCHEME = re.compile(r"^[A-Za-z][\w+.-]*:")


def looks_like_path(text: str) -> bool:
    """A file system location, URL or file name with a data/code extension."""
    if not text or len(text) > 4096:  # longer than any path the OS accepts
        return False
    return bool(PATH_PREFIX.match(text) or ("." in text and FILE_NAME.match(text)))


def is_local_path(text: str) -> bool:
    """A relative path that stays inside the working directory (no `..`, `~`, scheme).

    Hidden files and directories (`.env`, `.git/config`) are refused too: they hold
    credentials and settings, not data.
    """
    if not text or "\x00" in text or text.strip() != text:
        return False
    while text.startswith("./"):
        text = text[2:]
    if PATH_PREFIX.match(text) or _SCHEME.match(text) or text.startswith(("~", "\\")):
        return False
    parts = re.split(r"[\\/]+", text)
    return not any(p.startswith((".", "~")) for p in parts)
