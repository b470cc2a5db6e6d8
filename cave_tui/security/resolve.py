"""Follow `pd.io.common.os`-style chains through the real module objects.

An allowed module's attributes include whatever that module imported: `json.codecs`,
`dataclasses.builtins`, `pandas.io.common.os`, `pandas.io.common.Path`. Rather than
list them, the resolver looks: it walks each hop in the module's `__dict__` (never calling
`getattr`, so no module `__getattr__` runs) and reports the first hop that lands on a
module that is not allowed, or on a function/class that lives in one. Only allowed
top-level modules are ever imported here, and only when a chain needs them.
"""

from __future__ import annotations

import builtins
import importlib
import importlib.util
import sys
import threading
import types
from typing import Any

from cave_tui.security.lists import DENIED_MEMBERS, DENIED_MODULE_WORDS

_MISSING = object()

# Builtins that must not be reachable under another name (`io.open`, a module's `eval`).
_BANNED_BUILTINS = {
    id(getattr(builtins, name))
    for name in (
        "eval", "exec", "compile", "open", "__import__", "globals", "locals", "vars",
        "breakpoint", "input", "help", "getattr", "setattr", "delattr", "memoryview",
    )
    if hasattr(builtins, name)
}  # fmt: skip


def _top(module_name: str) -> str:
    """`_io` -> `io`, `numpy._core.x` -> `numpy`: the public package a module belongs to."""
    return module_name.split(".", 1)[0].lstrip("_")


class ModuleResolver:
    """Answers 'is this module allowed?' and walks attribute chains from allowed roots."""

    def __init__(self, allowed: frozenset[str], denied_submodules: frozenset[str]) -> None:
        self.allowed = allowed
        self.denied = denied_submodules
        self._roots: dict[str, Any] = {}
        self._specs: dict[str, bool] = {}
        self._walks: dict[tuple[str, ...], tuple[int, str] | None] = {}
        self._warming: threading.Thread | None = None

    # -- module policy ----------------------------------------------------------------
    def module_problem(self, name: str) -> str | None:
        """Why module *name* may not be used, or None when it may."""
        parts = name.split(".")
        if parts[0] not in self.allowed:
            return f"module '{parts[0]}' is not on the allow-list"
        for i in range(2, len(parts) + 1):
            if ".".join(parts[:i]) in self.denied:
                return f"module '{'.'.join(parts[:i])}' is not allowed"
        lowered = name.lower()
        for word in DENIED_MODULE_WORDS:
            if word in lowered:
                return f"module '{name}' is not allowed"
        return None

    def _object_problem(self, value: Any, label: str) -> str | None:
        if isinstance(value, types.ModuleType):
            problem = self.module_problem(value.__name__)
            if problem is None:
                return None
            top = value.__name__.split(".", 1)[0]
            if _top(value.__name__) in self.allowed and top.startswith("_"):
                return None  # C accelerators of allowed modules (_json, _datetime)
            return f"'{label}' is the module '{value.__name__}'; {problem}"
        if id(value) in _BANNED_BUILTINS:
            return f"'{label}' is the builtin {getattr(value, '__name__', '?')}()"
        try:  # classes, functions (Cython ones too) and most instances say where they live
            module = value.__module__
        except Exception:
            module = None
        if not isinstance(module, str):
            module = getattr(type(value), "__module__", None)
        if not isinstance(module, str) or module == "builtins":
            return None
        if _top(module) not in self.allowed:
            return f"'{label}' comes from module '{module}', which is not allowed"
        for i in range(2, module.count(".") + 2):
            prefix = ".".join(module.split(".")[:i])
            if prefix in self.denied:
                return f"'{label}' comes from module '{module}', which is not allowed"
        return None

    def warm_up(self, names: tuple[str, ...] = ("numpy", "pandas", "pyarrow")) -> None:
        """Import heavy allowed roots on a daemon thread, so the first check does not wait.

        The checker runs on the host's event loop; resolving `pd.io.common.os` needs pandas
        imported, which takes about a second the first time.
        """

        def load() -> None:
            for name in names:
                if name in self.allowed:
                    self.root(name)

        self._warming = threading.Thread(target=load, name="cave-security-warmup", daemon=True)
        self._warming.start()

    def wait_warm(self, timeout: float | None = None) -> None:
        """Block until `warm_up` has finished (benchmarks measure the steady state)."""
        if self._warming is not None:
            self._warming.join(timeout)

    # -- roots ------------------------------------------------------------------------
    def root(self, dotted: str) -> Any:
        """The module object for an allowed dotted path, importing it if needed; else None."""
        if dotted in self._roots:
            return self._roots[dotted]
        module = None
        if self.module_problem(dotted) is None:
            try:
                # import_module (not sys.modules) waits for an import another thread has
                # under way, so a half-initialised module is never walked.
                if importlib.util.find_spec(dotted.split(".", 1)[0]) is not None:
                    module = importlib.import_module(dotted)
            except Exception:  # not installed or broken: the chain stays unresolved
                module = None
        self._roots[dotted] = module
        return module

    def value(self, dotted: str, attrs: list[str]) -> Any:
        """The object at `dotted.attrs...` through module dicts only, or None."""
        value = self.root(dotted)
        if value is None and "." in dotted:
            parent, _, name = dotted.rpartition(".")
            module = self.root(parent)
            if isinstance(module, types.ModuleType):
                value = vars(module).get(name)
        for attr in attrs:
            if isinstance(value, types.ModuleType):
                value = vars(value).get(attr)
            elif isinstance(value, type):
                value = value.__dict__.get(attr)
            else:
                return None
            if value is None:
                return None
        return value

    def _submodule(self, parent: types.ModuleType, attr: str) -> str | None:
        """The dotted name if *attr* is a submodule of *parent* not yet loaded as attribute."""
        name = f"{parent.__name__}.{attr}"
        if name in sys.modules:
            return name
        if name not in self._specs:
            try:
                found = hasattr(parent, "__path__") and importlib.util.find_spec(name) is not None
            except Exception:
                found = False
            self._specs[name] = found
        return name if self._specs[name] else None

    # -- chains -----------------------------------------------------------------------
    def walk(self, root_path: str, attrs: list[str]) -> tuple[int, str] | None:
        """First hop (index into *attrs*) where the chain leaves allowed ground, and why."""
        key = (root_path, *attrs)
        if key in self._walks:
            return self._walks[key]
        result, final = self._walk(root_path, attrs)
        if final:  # never cache an answer that a later import could change
            if len(self._walks) > 4096:
                self._walks.clear()
            self._walks[key] = result
        return result

    def _walk(self, root_path: str, attrs: list[str]) -> tuple[tuple[int, str] | None, bool]:
        value = self.root(root_path)
        if value is None:
            return None, False
        label = root_path
        for index, attr in enumerate(attrs):
            label = f"{label}.{attr}"
            if not isinstance(value, types.ModuleType):
                return None, True  # past the module graph: the attribute rules take over
            if attr in DENIED_MEMBERS.get(value.__name__, ()):
                return (index, f"'{label}' is not allowed"), True
            found = vars(value).get(attr, _MISSING)
            if found is _MISSING:
                sub = self._submodule(value, attr)
                if sub is None:
                    return None, False
                problem = self.module_problem(sub)
                if problem:
                    return (index, f"'{label}' is the module '{sub}'; {problem}"), True
                found = sys.modules.get(sub)
                if found is None:
                    return None, False
            problem = self._object_problem(found, label)
            if problem:
                return (index, problem), True
            value = found
        return None, True

    def member_problem(self, module_path: str, name: str) -> str | None:
        """Why `from module_path import name` reaches something not allowed, if it does."""
        result = self.walk(module_path, [name])
        return result[1] if result else None
