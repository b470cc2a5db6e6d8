"""Upstream CaveAgent's runtime vocabulary, as adapters over cave's own runtime.

Upstream host code calls `inject_function`, `describe_types`, `get_from_namespace`…
and passes `error_feedback_mode=`. Cave's runtimes keep one design (`inject`,
`retrieve`, the live namespace summary); this module holds what those upstream
spellings need beyond it: `ErrorFeedbackMode`, `CellError`, the types an injected
value or signature refers to (`referenced_types`), and upstream's prompt text for
`describe_*` (`describe_*_text`, `TypeSchemaExtractor`). Nothing here imports IPython.
"""

from __future__ import annotations

import builtins
import dataclasses
import enum
import inspect
import types
from collections.abc import Callable, Iterator
from typing import Any, ForwardRef, Union, get_args, get_origin

from cave_tui.runtime.shipped.summary import signature_of


class ErrorFeedbackMode(enum.Enum):
    """How much of a failed cell's traceback the model is shown (upstream's enum)."""

    PLAIN = "Plain"  # the (compact) traceback and the exception line
    MINIMAL = "Minimal"  # the exception line only


class CellError(Exception):
    """A cell's error whose exception object is not at hand in the host.

    The exception lived in a kernel process, or there was none (a timeout, an
    interrupt, a busy runtime): `str()` is the text the model is shown.
    """


def minimal_error(text: str) -> str:
    """*text* (a shaped traceback) without its frames: the exception lines only."""
    lines = text.splitlines()
    if not lines or lines[0] != "Traceback (most recent call last):":
        return text
    for i, line in enumerate(lines[1:], 1):
        if line and not line[0].isspace():
            return "\n".join(lines[i:])
    return text


# -- types an injected item refers to ---------------------------------------------------------
_BUILTIN_TYPES = frozenset(
    {
        str, int, float, bool, bytes, bytearray, list, dict, tuple, set, frozenset,
        type(None), object, type, complex,
    }
)  # fmt: skip


def _injectable(cls: object) -> bool:
    name = getattr(cls, "__name__", "")
    return (
        isinstance(cls, type)
        and cls not in _BUILTIN_TYPES
        and isinstance(name, str)
        and name.isidentifier()
        # a builtin class, not one defined by `exec` (whose module is also "builtins")
        and getattr(builtins, name, None) is not cls
    )


def _types_in_hint(hint: Any) -> Iterator[type]:
    if hint is None or isinstance(hint, str | ForwardRef):
        return
    if get_origin(hint) is not None:
        for arg in get_args(hint):
            yield from _types_in_hint(arg)
    elif _injectable(hint):
        yield hint


def referenced_types(item: Any) -> list[type]:
    """Classes upstream injects with a Variable or Function: the value's class, the
    signature's annotated classes (builtins, strings and forward references skipped)."""
    if not hasattr(item, "func"):  # a Variable (a Type refers to no other)
        value = getattr(item, "value", None)
        if value is None or not _injectable(type(value)):
            return []
        return [type(value)]
    try:
        sig = inspect.signature(item.func, eval_str=True)  # `from __future__ import annotations`
    except Exception:  # one name only its defining scope knows: resolve the hints one by one
        try:
            sig = inspect.signature(item.func)
        except (TypeError, ValueError):
            return []
    hints = [p.annotation for p in sig.parameters.values() if p.annotation is not p.empty]
    if sig.return_annotation is not sig.empty:
        hints.append(sig.return_annotation)
    hints = [_resolved(hint, item.func) for hint in hints]
    found: list[type] = []
    for hint in hints:
        found += [t for t in _types_in_hint(hint) if t not in found]
    return found


def _resolved(hint: Any, func: Any) -> Any:
    """A string hint evaluated in *func*'s module, as `inspect.signature(eval_str=True)`
    does for all of them; one that names what the module lacks stays the string."""
    if not isinstance(hint, str):
        return hint
    scope = getattr(inspect.unwrap(func), "__globals__", None)
    if not isinstance(scope, dict):
        return hint
    try:
        return eval(hint, scope)
    except Exception:
        return hint


# -- upstream's prompt text -----------------------------------------------------------------
def describe_variable(variable: Any) -> str:
    lines = [f"- name: {variable.name}", f"  type: {variable.type_name}"]
    if variable.description:
        lines.append(f"  description: {variable.description}")
    return "\n".join(lines)


def describe_function(function: Any) -> str:
    lines = [f"- function: {signature_of(function.func)}"]
    if function.description:
        lines.append(f"  description: {function.description}")
    doc = function.doc
    if doc:
        lines.append("  doc:")
        lines += [f"    {line}" for line in doc.split("\n")]
    return "\n".join(lines)


def describe_type(type_obj: Any) -> str:
    """Upstream's `str(Type)`: the schema and/or doc, "" when both are hidden."""
    cls, schema = type_obj.value, None
    if type_obj.include_schema:
        schema = TypeSchemaExtractor.schema(cls, type_obj.include_doc)
    elif type_obj.include_doc and (cls.__doc__ or "").strip():
        schema = f"{cls.__name__}:\n  doc: {(cls.__doc__ or '').strip()}"
    if not schema:
        return ""
    if type_obj.description:
        first, _, rest = schema.partition("\n")
        schema = f"{first}\n  description: {type_obj.description}" + (f"\n{rest}" if rest else "")
    return schema


class TypeSchemaExtractor:
    """Upstream's schema text for a class: pydantic/dataclass fields, enum members, methods."""

    @classmethod
    def schema(cls, value: type, include_doc: bool = True) -> str | None:
        if issubclass(value, enum.Enum):
            members = [f"  - {m.name} = {m.value!r}" for m in value]
            return "\n".join([f"{value.__name__} (Enum):", *members])
        head = [f"{value.__name__}:"]
        if include_doc and (value.__doc__ or "").strip():
            head.append(f"  doc: {(value.__doc__ or '').strip()}")
        model_fields = getattr(value, "model_fields", None)
        if isinstance(model_fields, dict) and hasattr(value, "model_validate"):
            rows = []
            for name, info in model_fields.items():
                row = f"    - {name}: {cls.annotation(info.annotation)}"
                rows.append(row + (f"  # {info.description}" if info.description else ""))
            return "\n".join([*head, "  fields:", *rows])
        if dataclasses.is_dataclass(value):
            rows = []
            for f in dataclasses.fields(value):
                row = f"    - {f.name}: {cls.annotation(f.type)}"
                if f.default is not dataclasses.MISSING:
                    row += f" = {f.default!r}"
                elif f.default_factory is not dataclasses.MISSING:
                    row += " = <factory>"
                rows.append(row)
            return "\n".join([*head, "  fields:", *rows])
        methods = [m for m in (cls._method(n, f, include_doc) for n, f in _methods(value)) if m]
        return "\n".join([*head, "  methods:", *methods]) if methods else None

    @classmethod
    def _method(cls, name: str, method: Callable[..., Any], include_doc: bool) -> str | None:
        try:
            sig = inspect.signature(method)
        except (TypeError, ValueError):
            return None
        params = []
        for pname, p in sig.parameters.items():
            if pname == "self":
                continue
            text = pname
            if p.annotation is not p.empty:
                text += f": {cls.annotation(p.annotation)}"
            if p.default is not p.empty:
                text += f" = {p.default!r}"
            params.append(text)
        ret = sig.return_annotation
        line = f"    - {name}({', '.join(params)})"
        if ret is not sig.empty:
            line += f" -> {cls.annotation(ret)}"
        doc = (method.__doc__ or "").strip()
        return line + (f"\n        {doc}" if include_doc and doc else "")

    @classmethod
    def annotation(cls, hint: Any) -> str:
        """A type annotation as upstream prints it (`Optional[int]`, `list[str]`)."""
        if hint is None or hint is type(None):
            return "None"
        if isinstance(hint, ForwardRef):
            return hint.__forward_arg__
        if isinstance(hint, str):
            return hint
        origin, args = get_origin(hint), get_args(hint)
        if origin is not None:
            if origin is Union or origin is types.UnionType:
                rest = [a for a in args if a is not type(None)]
                if len(rest) == 1 and len(args) == 2:
                    return f"Optional[{cls.annotation(rest[0])}]"
                return f"Union[{', '.join(cls.annotation(a) for a in args)}]"
            name = getattr(origin, "__name__", str(origin).replace("typing.", ""))
            return f"{name}[{', '.join(cls.annotation(a) for a in args)}]" if args else name
        return str(getattr(hint, "__name__", hint))

    @classmethod
    def _format_type_annotation(cls, hint: Any) -> str:
        """Upstream's name for `annotation` (its tests and subclasses call it)."""
        return cls.annotation(hint)


def _methods(cls: type) -> list[tuple[str, Callable[..., Any]]]:
    return [(n, f) for n, f in inspect.getmembers(cls, predicate=inspect.isfunction) if n[0] != "_"]


def describe_all(items: list[Any], render: Callable[[Any], str], kind: str) -> str:
    texts = [t for t in (render(i) for i in items) if t]
    return "\n".join(texts) if texts else f"No {kind} available"
