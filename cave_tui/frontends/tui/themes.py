"""Load theme files (TOML) as Textual themes: the bundled ones, then the user's own.

A theme file holds the fields of `textual.theme.Theme` (name, primary, secondary,
accent, foreground, background, surface, panel, success, warning, error, dark,
variables, …). Users add themes in `<config dir>/themes/*.toml`; a broken file is
reported and skipped.
"""

from __future__ import annotations

import tomllib
from dataclasses import fields
from pathlib import Path

from textual.theme import Theme

BUNDLED = Path(__file__).resolve().parents[2] / "themes"
_FIELDS = {f.name for f in fields(Theme)}


def theme_from_file(path: Path) -> Theme:
    """Parse one theme file; ValueError (naming the file) when it is not a valid theme."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ValueError(f"{path}: {exc}") from None
    unknown = set(data) - _FIELDS
    if unknown:
        raise ValueError(f"{path}: unknown theme fields {', '.join(sorted(unknown))}")
    if "name" not in data or "primary" not in data:
        raise ValueError(f"{path}: a theme needs at least `name` and `primary`")
    try:
        return Theme(**data)
    except Exception as exc:
        raise ValueError(f"{path}: {exc}") from None


def load_themes(*directories: Path) -> tuple[list[Theme], list[str]]:
    """Themes from each directory in order (later ones replace same-named), and problems."""
    themes: dict[str, Theme] = {}
    problems: list[str] = []
    for directory in directories:
        if not directory.is_dir():
            continue
        for path in sorted(directory.glob("*.toml")):
            try:
                theme = theme_from_file(path)
            except ValueError as exc:
                problems.append(f"theme skipped: {exc}")
                continue
            themes[theme.name] = theme
    return list(themes.values()), problems
