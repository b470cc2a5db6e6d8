"""Stable display options: what a cell prints never depends on the terminal cave runs in.

pandas sizes its reprs to the terminal when it believes it runs in one (in-process,
`display.max_columns` is 0: "as many columns as the terminal fits"), which would make a
recorded session's output differ between terminals (and `cave replay --check` with it).
Both runtimes call `pin_display()` when they start: pandas' options are set to its own
defaults outside a terminal (a notebook's), at once if pandas is imported, else right
after the first `import pandas`. The one exception is the width: a front end sets the
width its log has (`set_width`, before each cell), and the session records it with the
cell, so a replay prints at the width the cell was recorded at.

Standard library only: the kernel runs this file as `_cave_display` (kernel/install.py).
"""

from __future__ import annotations

import sys
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType
from typing import Any

DEFAULT_WIDTH = 80  # a cell's width when no front end said otherwise (and before widths)
MIN_WIDTH = 20
MAX_WIDTH = 1000

# Non-zero and not None: pandas then never asks the terminal for its size.
PANDAS_OPTIONS: dict[str, int] = {
    "display.width": DEFAULT_WIDTH,
    "display.max_columns": 20,
    "display.max_rows": 60,
    "display.min_rows": 10,
}


def pin_pandas(pandas: Any) -> None:
    """Set `PANDAS_OPTIONS` on the *pandas* module (an option it lacks is left alone)."""
    for name, value in PANDAS_OPTIONS.items():
        try:
            pandas.set_option(name, value)
        except Exception:  # an older or newer pandas without this option
            pass


def clamp_width(width: int) -> int:
    """*width* within what a frame is printed at (MIN_WIDTH to MAX_WIDTH columns)."""
    return max(MIN_WIDTH, min(MAX_WIDTH, int(width)))


def set_width(width: int) -> None:
    """Print frames *width* columns wide from now on (clamped), whether or not pandas is
    imported yet (the import hook pins `PANDAS_OPTIONS`, which holds it)."""
    width = clamp_width(width)
    PANDAS_OPTIONS["display.width"] = width
    pandas = sys.modules.get("pandas")
    if pandas is not None and hasattr(pandas, "set_option"):
        try:
            pandas.set_option("display.width", width)
        except Exception:  # a pandas without the option
            pass


class PandasImportHook:
    """A `sys.meta_path` finder that pins the options once `import pandas` has run.

    It wraps the exec_module of pandas' own loader (that one spec's instance only) and
    leaves `sys.meta_path` after the first successful import.
    """

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if fullname != "pandas":
            return None
        spec = None
        for finder in sys.meta_path:
            find = getattr(finder, "find_spec", None)
            if finder is self or find is None:
                continue
            spec = find(fullname, path, target)
            if spec is not None:
                break
        loader = getattr(spec, "loader", None)
        exec_module = getattr(loader, "exec_module", None)
        if spec is None or loader is None or exec_module is None:
            return spec

        def exec_and_pin(module: ModuleType) -> None:
            exec_module(module)
            pin_pandas(module)
            self.remove()
            vars(loader).pop("exec_module", None)

        loader.exec_module = exec_and_pin
        return spec

    def remove(self) -> None:
        if self in sys.meta_path:
            sys.meta_path.remove(self)


def pin_display() -> None:
    """Pin pandas' display options now, or as soon as pandas is imported."""
    pandas = sys.modules.get("pandas")
    if pandas is not None and hasattr(pandas, "set_option"):
        pin_pandas(pandas)
        return
    if not any(type(f).__name__ == PandasImportHook.__name__ for f in sys.meta_path):
        sys.meta_path.insert(0, PandasImportHook())
