"""What the host's pickle reader may call, and how: the allow-list's builtin types rebuilt by
explicit, bounded constructions (never called with the kernel's arguments), and the other
allow-listed constructors, each given only values the reader already built and counted."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from cave_tui.runtime.shipped.transport import (
    _NUMBER_CHARS,
    SAFE_GLOBALS,
    UnsafeObjectError,
    _bounded_int,
    _pandas_offset,
)

SCALARS = (type(None), bool, int, float, complex, str, bytes)
SEQUENCES = (list, tuple, set, frozenset)


def resolve(module: str, name: str) -> Any:
    import importlib

    return getattr(importlib.import_module(module), name)


def call_name(func: Any) -> str:
    return str(getattr(func, "__qualname__", None) or type(func).__name__)


def is_value(value: Any) -> bool:
    """An instance of an allow-listed class (not a class or function itself)."""
    kind = type(value)
    return (
        (kind.__module__, kind.__name__) in SAFE_GLOBALS
        or (_pandas_offset(kind.__module__, kind.__name__) is not None)
        or kind.__module__.startswith(("pandas", "pathlib", "datetime", "zoneinfo", "uuid"))
    )


def is_argument(arg: Any) -> bool:
    """What an allow-listed constructor may be given: values, and allow-listed factories."""
    kind = type(arg)
    if kind in SCALARS or kind in SEQUENCES or is_value(arg):
        return True
    return arg in EXPLICIT_TYPES or arg in CALLABLE


def is_mutable_collection(value: Any) -> bool:
    return type(value).__module__ == "collections" and type(value).__name__ == "deque"


# -- the builtin types, rebuilt explicitly --------------------------------------------------


def _one_sequence(kind: str, args: tuple[Any, ...]) -> list[Any]:
    if not args:
        return []
    if len(args) != 1 or type(args[0]) not in (*SEQUENCES, dict):
        shown = ", ".join(type(a).__name__ for a in args)
        raise UnsafeObjectError(f"{kind}({shown})")
    return list(args[0])


def _build_dict(args: tuple[Any, ...]) -> dict[Any, Any]:
    if args and len(args) == 1 and type(args[0]) is dict:
        return dict(args[0])
    out: dict[Any, Any] = {}
    for pair in _one_sequence("dict", args):
        if type(pair) not in (tuple, list) or len(pair) != 2:
            raise UnsafeObjectError("dict() of something other than pairs")
        out[pair[0]] = pair[1]
    return out


def _build_str(args: tuple[Any, ...]) -> str:
    if not args:
        return ""
    if len(args) == 1 and type(args[0]) is str:
        return args[0]
    raise UnsafeObjectError(f"str({', '.join(type(a).__name__ for a in args)})")


def _build_float(args: tuple[Any, ...]) -> float:
    if not args:
        return 0.0
    (arg,) = args
    if type(arg) in (float, int) or (type(arg) is str and len(arg) <= _NUMBER_CHARS):
        return float(arg)
    raise UnsafeObjectError(f"float({type(arg).__name__})")


def _build_complex(args: tuple[Any, ...]) -> complex:
    if len(args) <= 2 and all(type(a) in (float, int) for a in args):
        return complex(*args)
    raise UnsafeObjectError(f"complex({', '.join(type(a).__name__ for a in args)})")


def _build_bool(args: tuple[Any, ...]) -> bool:
    if not args:
        return False
    if len(args) == 1 and type(args[0]) in (bool, int):
        return bool(args[0])
    raise UnsafeObjectError("bool() of something other than a number")


def _build_bytes(kind: type) -> Callable[[tuple[Any, ...]], Any]:
    def build(args: tuple[Any, ...]) -> Any:
        if not args:
            return kind()
        if len(args) == 1 and type(args[0]) in (bytes, bytearray):
            return kind(args[0])
        if (
            len(args) == 2
            and type(args[0]) is str
            and args[1] in ("latin1", "latin-1")  # protocol 2's bytes: bytes(text, "latin1")
        ):
            return kind(args[0], "latin1")
        raise UnsafeObjectError(f"{kind.__name__}({', '.join(type(a).__name__ for a in args)})")

    return build


def _build_slice(args: tuple[Any, ...]) -> slice:
    if 1 <= len(args) <= 3 and all(type(a) in (type(None), int) for a in args):
        return slice(*args)
    raise UnsafeObjectError("slice() of something other than ints")


EXPLICIT: dict[Any, Callable[[tuple[Any, ...]], Any]] = {
    list: lambda args: _one_sequence("list", args),
    tuple: lambda args: tuple(_one_sequence("tuple", args)),
    set: lambda args: set(_one_sequence("set", args)),
    frozenset: lambda args: frozenset(_one_sequence("frozenset", args)),
    dict: _build_dict,
    str: _build_str,
    float: _build_float,
    complex: _build_complex,
    bool: _build_bool,
    bytes: _build_bytes(bytes),
    bytearray: _build_bytes(bytearray),
    slice: _build_slice,
}
BUILTINS: dict[tuple[str, str], Any] = {("builtins", t.__name__): t for t in EXPLICIT}
BUILTINS[("builtins", "int")] = _bounded_int
EXPLICIT[_bounded_int] = lambda args: _bounded_int(*_scalars("int", args))
EXPLICIT_TYPES = frozenset(EXPLICIT)


def _scalars(kind: str, args: tuple[Any, ...]) -> tuple[Any, ...]:
    if any(type(a) not in SCALARS for a in args):
        raise UnsafeObjectError(f"{kind}({', '.join(type(a).__name__ for a in args)})")
    return args


class _Callables:
    """The allow-list's other callables (constructors whose work is bounded by their
    arguments, all counted): membership by identity, resolved on first use."""

    def __init__(self) -> None:
        self._found: set[int] | None = None

    def __contains__(self, func: Any) -> bool:
        if self._found is None:
            found = set()
            for (module, name), replacement in SAFE_GLOBALS.items():
                if (module, name) in BUILTINS:
                    continue
                try:
                    found.add(id(replacement or resolve(module, name)))
                except (ImportError, AttributeError):
                    continue
            self._found = found
        if _is_zoneinfo_unpickle(func):
            return True
        return id(func) in self._found or (
            isinstance(func, type)
            and _pandas_offset(func.__module__ or "", func.__name__) is not None
        )


CALLABLE = _Callables()


def _is_zoneinfo_unpickle(func: Any) -> bool:
    """`getattr(ZoneInfo, "_unpickle")`, the one result `transport._safe_getattr` gives."""
    import zoneinfo

    return getattr(func, "__self__", None) is zoneinfo.ZoneInfo and (
        getattr(func, "__name__", "") == "_unpickle"
    )
