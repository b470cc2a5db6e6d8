"""Modules that run inside the Jupyter kernel's process: shipped there as source text
(kernel/install.py, as `_cave_<name>` modules) or run there as a script (launcher.py).

The in-process runtime and the host import most of them too. They import only each other,
the standard library and third-party packages, never the rest of `cave_tui` (an
import-linter contract in pyproject.toml): a kernel needs nothing of cave installed.
"""

from __future__ import annotations

from pathlib import Path

SHIPPED_DIR = Path(__file__).resolve().parent
