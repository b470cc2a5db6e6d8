"""Whether a module a dump asks to import is an installed package or code that came with it.

A dump's `modules` entries are imported again on load, and importing runs the module.
A module of the standard library or of an installed package is code the user already
chose to have; one found in the current folder or the dump folder (where whoever wrote
the dump may have put it), or one that acts when imported (`antigravity` opens a web
browser), needs trust like a pickle.
"""

from __future__ import annotations

import enum
import importlib.machinery
import importlib.util
import os
import sys
from collections.abc import Iterable
from pathlib import Path

# Standard-library modules that do something visible the moment they are imported.
ACTS_WHEN_IMPORTED = frozenset({"antigravity", "this", "__hello__", "__phello__"})


class ModuleSource(enum.Enum):
    """Where a module would be imported from."""

    STDLIB = "the standard library"
    INSTALLED = "an installed package"
    LOCAL = "a file in the current folder or the dump folder"
    ACTS_ON_IMPORT = "a module that acts when imported"
    MISSING = "not installed here"

    @property
    def needs_trust(self) -> bool:
        return self in (ModuleSource.LOCAL, ModuleSource.ACTS_ON_IMPORT)


def _search_entry(spec: importlib.machinery.ModuleSpec) -> Path | None:
    """The `sys.path` folder a top-level module's spec was found in."""
    if spec.submodule_search_locations:
        return Path(next(iter(spec.submodule_search_locations))).parent
    if spec.origin and os.path.isabs(spec.origin):
        return Path(spec.origin).parent
    return None


def module_source(module: str, local_roots: Iterable[str | Path] = ()) -> ModuleSource:
    """Where *module* (a dotted name) would come from; nothing is imported to find out.

    *local_roots* are folders whose modules count as `LOCAL` (the current folder always).
    """
    top = module.split(".")[0]
    if top in ACTS_WHEN_IMPORTED:
        return ModuleSource.ACTS_ON_IMPORT
    try:
        spec = importlib.util.find_spec(top)
    except (ImportError, ValueError):
        return ModuleSource.MISSING
    if spec is None:
        return ModuleSource.MISSING
    entry = _search_entry(spec)
    roots = {Path.cwd().resolve(), *(Path(r).resolve() for r in local_roots)}
    if entry is not None and entry.resolve() in roots:
        return ModuleSource.LOCAL
    if top in sys.stdlib_module_names or spec.origin in ("built-in", "frozen"):
        return ModuleSource.STDLIB
    return ModuleSource.INSTALLED
