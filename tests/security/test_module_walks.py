"""Every re-export of a denied module (or of its functions) by an allowed module is refused.

Scans the modules the strict allow-list loads (pandas, numpy, pyarrow, matplotlib and the
standard ones) for attributes that are modules off the list, or functions and classes
defined in one, and checks `module.attr` against strict: the resolver must refuse them all
without anyone listing them.
"""

from __future__ import annotations

import importlib
import sys
import types

import pytest

from cave_tui.security import SecurityChecker
from cave_tui.security import lists as L

ROOTS = (
    "pandas", "numpy", "pyarrow", "matplotlib.pyplot", "contextlib", "zoneinfo", "time",
    "abc", "pprint", "operator", "json", "typing", "dataclasses", "functools", "copy",
)  # fmt: skip


def _allowed(module_name: str) -> bool:
    return module_name.split(".", 1)[0].lstrip("_") in L.STRICT_ALLOWED_IMPORTS


def _re_exports() -> list[str]:
    for root in ROOTS:
        try:
            importlib.import_module(root)
        except ImportError:
            continue
    found = []
    for name in sorted(sys.modules):
        module = sys.modules.get(name)
        if module is None or not _allowed(name) or any(p.startswith("_") for p in name.split(".")):
            continue
        for attr, value in list(vars(module).items()):
            if attr.startswith("_"):
                continue
            home = value.__name__ if isinstance(value, types.ModuleType) else None
            if home is None:
                home = getattr(value, "__module__", None)
                if not isinstance(home, str) or home == "builtins":
                    continue
            if not _allowed(home):
                found.append(f"{name}.{attr}")
    return found


@pytest.fixture(scope="module")
def strict() -> SecurityChecker:
    return SecurityChecker.for_policy("strict")


def test_no_re_export_of_a_denied_module_gets_through(strict):
    exports = _re_exports()
    assert len(exports) >= 100  # the scan really found the re-exports it is about
    leaks = [e for e in exports if not strict.check(f"import {e.split('.')[0]}\n{e}")]
    assert not leaks, leaks[:20]
