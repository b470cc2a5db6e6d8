"""The figures of a session: each PNG a cell displayed, saved in the session folder's
`figures/` and named by the cell's event (`figure_files`, relative to the folder), so
resume, replay and the notebook export show them again.

A recorded name is read back only when it is a plain `figures/<name>.png` inside the
folder, and its bytes only when they are a PNG within the runtime's bounds.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from pathlib import Path

from cave_tui.agent import events as ev
from cave_tui.dataio.bounded_read import read_regular
from cave_tui.runtime.figures import MAX_FIGURE_BYTES, Figures

FIGURES = "figures"
_NAME = re.compile(r"^figures/[A-Za-z0-9_.-]{1,80}\.png$")


def save_figures(folder: Path, stem: str, pngs: Iterable[bytes]) -> list[str]:
    """Write *pngs* as `figures/<stem>-<n>.png` in *folder* (never over an existing file):
    their names relative to *folder*. OSError when the folder cannot be written."""
    target = folder / FIGURES
    target.mkdir(parents=True, exist_ok=True)
    names: list[str] = []
    number = 1
    for png in pngs:
        while (target / f"{stem}-{number}.png").exists():
            number += 1
        path = target / f"{stem}-{number}.png"
        path.write_bytes(png)
        names.append(f"{FIGURES}/{path.name}")
        number += 1
    return names


def figure_path(folder: Path, name: object) -> Path | None:
    """The file a recorded figure name stands for, None when it is not one of ours (a
    record is data: any JSON value may stand there)."""
    if not isinstance(name, str) or not _NAME.match(name):
        return None
    return folder / name


def read_figure(path: Path) -> bytes | None:
    """A saved figure's PNG bytes, None when it is gone, too big or not a PNG."""
    try:
        png = read_regular(path, MAX_FIGURE_BYTES)
    except (OSError, ValueError):
        return None
    return png if Figures().add(png) else None


def resolve_figures(events: Iterable[ev.Event], folder: Path) -> None:
    """Give each recorded cell event of *folder* the paths of its saved figures, for a
    front end to show them again (`saved_figures`)."""
    for event in events:
        if isinstance(event, ev.CellResultEvent) and event.figure_files:
            paths = (figure_path(folder, name) for name in event.figure_files)
            event.saved_figures = [str(p) for p in paths if p is not None]
