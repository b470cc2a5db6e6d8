"""Helpers to write skill folders for the tests."""

from __future__ import annotations

from pathlib import Path

import pytest


def write_skill(
    root: Path,
    folder: str,
    *,
    name: str | None = None,
    description: str = "Does a thing. Use when testing.",
    body: str = "# Instructions\nDo the thing.",
    extra: str = "",
    injection: str | None = None,
    raw: str | None = None,
) -> Path:
    """Create root/folder/SKILL.md (and injection.py); return the SKILL.md path."""
    directory = root / folder
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / "SKILL.md"
    if raw is not None:
        path.write_text(raw, encoding="utf-8")
    else:
        front = f"name: {name if name is not None else folder}\ndescription: {description}\n"
        path.write_text(f"---\n{front}{extra}---\n{body}\n", encoding="utf-8")
    if injection is not None:
        (directory / "injection.py").write_text(injection, encoding="utf-8")
    return path


@pytest.fixture
def make_skill(tmp_path):
    def make(folder: str, **kwargs):
        return write_skill(tmp_path / "skills", folder, **kwargs)

    return make
