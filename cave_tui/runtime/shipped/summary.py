"""Bounded-cost summaries of namespace objects.

Used for the prompt's namespace description and the TUI inspector. Never calls
`repr`/`str` unbounded on a large object: containers are sampled, frames are
described from their schema and `head()`, and every preview has a character
budget. This module imports only the standard library at module level so the
kernel runtime can run the same code inside the kernel process.

A summary row (`VarInfo`) is structured data: a shape tuple, (name, dtype) columns,
levels by column, relations as objects. The text every reader shows of those fields
(prompt, answer checks, tips, inspector, detail view, /vars) is written by their
`*_text()` methods here, and nowhere else.
Over 400 lines: the rows, their text and the bounded describers must ship to the kernel
as one module (the kernel runs this file as it is).
"""

from __future__ import annotations

import dataclasses
import difflib
import enum
import inspect
import os
import re
import sys
import types
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from cave_tui.runtime.shipped.lazy import Facts, Mode, lazy_facts, short_text  # _cave_lazy

PREVIEW_CHARS = 80
DESCRIBE_CHARS = 360  # for objects with a `__cave_describe__(name)` hook
MAX_COLUMNS = 24
# A wide frame's column names past MAX_COLUMNS (no dtypes): the model must see a column to
# use it, and a name costs a few tokens. Bounded for frames of thousands of columns.
MORE_NAMES = 200
NAME_CHARS = 64
SAMPLE_ITEMS = 8

# Names IPython (or we) put in every namespace; never user variables.
HIDDEN_NAMES = frozenset(
    {
        "In",
        "Out",
        "get_ipython",
        "exit",
        "quit",
        "open",
        "display",
        "activate_skill",
        "final_answer",
    }
)


# How the namespace description writes common dtypes: fewer tokens, same sense.
SHORT_DTYPES = {"int64": "int", "float64": "float", "datetime64[ns]": "datetime"}


@dataclass(frozen=True)
class Column:
    """One column of a frame: its name and its dtype, as text."""

    name: str
    dtype: str

    def text(self, *, short: bool = False) -> str:
        """As written: "name:dtype"; *short* writes common dtypes short ("int", "float")."""
        return f"{self.name}:{_dtype_text(self.dtype, short)}"


def _dtype_text(dtype: str, short: bool) -> str:
    return SHORT_DTYPES.get(dtype, dtype) if short else dtype


@dataclass(frozen=True)
class Link:
    """A frame's column whose values are codes of a lookup frame's key: dest → airports.faa."""

    column: str
    frame: str
    key: str

    def key_text(self) -> str:
        """The lookup key as written: "airports.faa"."""
        return f"{self.frame}.{self.key}"


@dataclass(frozen=True)
class Codes:
    """A value made of a lookup frame's key codes (a code, a list of them, a Series)."""

    frame: str
    key: str
    where: str = "values"  # "values" or "index"
    source: str = ""  # the column they came from, when the Series names it ("dest")

    def key_text(self) -> str:
        """The lookup key as written: "airports.faa"."""
        return f"{self.frame}.{self.key}"


@dataclass
class Relations:
    """A row's relations to the namespace's lookup frames, found by runtime/shipped/links.py."""

    key: str = ""  # a lookup frame's key column: one row per value
    links: list[Link] = field(default_factory=list)  # a frame's columns holding such keys
    codes: Codes | None = None  # a value made of such keys

    def to_dict(self) -> dict[str, Any]:
        codes = self.codes
        return {
            "key": self.key,
            "links": [{"column": x.column, "frame": x.frame, "key": x.key} for x in self.links],
            "codes": None if codes is None else dict(codes.__dict__),
        }

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Relations:
        """From `to_dict()` or from links.relations(); missing keys are empty."""
        codes = data.get("codes")
        return cls(
            key=str(data.get("key") or ""),
            links=[Link(**link) for link in data.get("links") or []],
            codes=Codes(**codes) if codes else None,
        )


@dataclass
class VarInfo:
    """One row of a namespace summary: structured data; `from_dict(to_dict())` gives it back,
    through JSON too (the kernel sends rows so)."""

    name: str
    kind: str  # "variable" | "function" | "type" | "module"
    type_name: str
    shape: tuple[int, ...] | None = None  # of an array, frame, Series; () for a NumPy scalar
    length: int | None = None  # len() of a sized object without a shape (list, dict, str)
    size_bytes: int | None = None
    preview: str = ""
    columns: list[Column] = field(default_factory=list)  # a DataFrame's first MAX_COLUMNS
    more_columns: int = 0  # a DataFrame's columns past those
    more_names: list[str] = field(default_factory=list)  # their names, the first MORE_NAMES
    dtype: str = ""  # the element dtype of a Series or a NumPy array or scalar
    signature: str = ""
    doc: str = ""
    description: str = ""
    fingerprint: str = ""  # cheap change detector: type, id, size
    methods: list[str] = field(default_factory=list)  # a class's ".name(args) -> T  # doc"
    # Set by runtime/shipped/links.py on the whole namespace's rows:
    levels: dict[str, list[str]] = field(default_factory=dict)  # a frame's few text values
    relations: Relations = field(default_factory=Relations)
    is_empty: bool = False  # a variable holding nothing: see `holds_nothing`
    all_missing: bool = False  # a non-empty Series or 1-D array whose every value is NaN/None
    # A lazy or distributed frame (runtime/shipped/lazy.py): how it computes, e.g. "lazy,
    # 4 partitions, rows not computed", and how to get a small result (".head(5).collect()").
    lazy: str = ""
    small_result: str = ""

    def to_dict(self) -> dict[str, Any]:
        """JSON-able (`shape` is a tuple: JSON makes it a list, `from_dict` a tuple again)."""
        data = dict(self.__dict__)  # by hand: asdict deep-copies, 6x slower on a 10k listing
        data["columns"] = [{"name": c.name, "dtype": c.dtype} for c in self.columns]
        data["methods"] = list(self.methods)
        data["more_names"] = list(self.more_names)
        data["levels"] = {column: list(values) for column, values in self.levels.items()}
        data["relations"] = self.relations.to_dict()
        return data

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> VarInfo:
        """A row from its `to_dict()` (sent by the kernel as JSON); unknown keys are ignored.

        Also reads the flat string form an older cave's kernel code sends (an attached kernel
        keeps the code it was first given): "3x2", ["a:int64"], ["sex: female, male"]...
        """
        fields = {k: v for k, v in data.items() if k in _FIELDS}
        if "is_empty" not in data:  # the old form has no is_empty
            fields.update(_from_legacy(data))
        if fields.get("shape") is not None:
            fields["shape"] = tuple(int(n) for n in fields["shape"])
        fields["columns"] = [Column(**c) for c in fields.get("columns") or []]
        more = fields.get("more_names") or []  # bounded as the kernel's code bounds it
        fields["more_names"] = [str(n)[:NAME_CHARS] for n in more[:MORE_NAMES]]
        fields["levels"] = {str(c): list(v) for c, v in (fields.get("levels") or {}).items()}
        fields["relations"] = Relations.from_dict(fields.get("relations") or {})
        return cls(**fields)

    # -- the text every reader (prompt, checks, inspector, /vars) shows of these fields --
    def shape_text(self, *, one_dim_as_length: bool = False) -> str:
        """As shown: "336776x19", "10" (1-d), "scalar" (NumPy scalar), "len 4" (sized) or "".

        *one_dim_as_length*: a 1-d shape reads "len 10" too (as the prompt says it).
        """
        if one_dim_as_length and self.shape is not None and len(self.shape) == 1:
            return f"len {self.shape[0]}"
        return _dims_text(self.shape, self.length)

    def columns_text(self, *, short: bool = False) -> str:
        """As written: "a:int64, b:object, … +176 more" (*short*: "a:int, b:object, …")."""
        parts = [c.text(short=short) for c in self.columns]
        return ", ".join(parts + ([f"… +{self.more_columns} more"] if self.more_columns else []))

    def column_names_text(self) -> str:
        """The frame's column names as written: "a, b, … +176 more"."""
        parts = [c.name for c in self.columns]
        return ", ".join(parts + ([f"… +{self.more_columns} more"] if self.more_columns else []))

    def column_names(self) -> list[str]:
        """Every column name the row holds: those with a dtype, then the names past them."""
        return [c.name for c in self.columns] + list(self.more_names)

    def dtype_text(self, *, short: bool = False) -> str:
        """The element dtype as written: "int64" (*short*: "int")."""
        return _dtype_text(self.dtype, short)

    def levels_text(self) -> str:
        """As written: "species: A, G; sex: female, male"."""
        return "; ".join(f"{c}: {', '.join(values)}" for c, values in self.levels.items())

    def links_text(self) -> str:
        """As written, by lookup key: "carrier → airlines.carrier; origin, dest → airports.faa"."""
        by_key: dict[str, list[str]] = {}
        for link in self.relations.links:
            by_key.setdefault(link.key_text(), []).append(link.column)
        return "; ".join(f"{', '.join(cols)} → {key}" for key, cols in by_key.items())

    def lazy_text(self) -> str:
        """As the namespace line says it: "lazy, rows not computed; small result:
        flights.head(5).collect()", or "" for a value held in memory."""
        if not self.lazy:
            return ""
        small = f"; small result: {self.name}{self.small_result}" if self.small_result else ""
        return self.lazy + small

    def codes_text(self) -> str:
        """As written: "airports.faa codes", "index: airports.faa codes", or ""."""
        codes = self.relations.codes
        if codes is None:
            return ""
        return f"{'index: ' if codes.where == 'index' else ''}{codes.key_text()} codes"


_FIELDS = frozenset(VarInfo.__dataclass_fields__)
_LEGACY_RELATIONS = ("key", "links", "codes", "codes_in", "codes_from")
_LEGACY_EMPTY = frozenset({"0", "0.0", "nan", "None", "[]", "{}", "()", "set()", "''", '""'})


def _from_legacy(data: dict[str, Any]) -> dict[str, Any]:
    """The fields of a row in the old string form (see `VarInfo.from_dict`)."""
    out: dict[str, Any] = {}
    shape = data.get("shape")
    if isinstance(shape, str):
        out["shape"], out["length"] = None, None
        if shape == "scalar":
            out["shape"] = ()
        elif shape.startswith("len "):
            out["length"] = int(shape[4:])
        elif shape:
            out["shape"] = tuple(int(n) for n in shape.split("x"))
    columns = data.get("columns") or []
    if any(isinstance(c, str) for c in columns):
        named = [str(c).rpartition(":") for c in columns]
        if data.get("type_name") == "Series" or str(columns[0]).startswith("dtype:"):
            out["columns"], out["dtype"] = [], named[0][2]
        else:
            out["columns"] = [{"name": n, "dtype": t} for n, sep, t in named if sep]
            more = [c for c in columns if str(c).startswith("… +")]
            out["more_columns"] = int(more[0].split()[1].lstrip("+")) if more else 0
    levels = data.get("levels")
    if isinstance(levels, list):  # "sex: female, male": a value holding ", " was split
        out["levels"] = {c: v.split(", ") for c, _, v in (str(x).partition(": ") for x in levels)}
    if any(k in data for k in _LEGACY_RELATIONS):
        links = []
        for link in data.get("links") or []:
            column, _, target = str(link).partition("→")
            frame, _, key = target.partition(".")
            links.append({"column": column, "frame": frame, "key": key})
        frame, _, key = str(data.get("codes") or "").partition(".")
        where, source = data.get("codes_in") or "values", data.get("codes_from") or ""
        codes = {"frame": frame, "key": key, "where": where, "source": source}
        out["relations"] = {"key": data.get("key") or "", "links": links}
        out["relations"]["codes"] = codes if key else None
    if data.get("kind") == "variable":  # as the old answer check decided it
        if data.get("type_name") in ("DataFrame", "Series", "ndarray", "Index"):
            out["is_empty"] = 0 in (out.get("shape") or ())
        else:
            out["is_empty"] = str(data.get("preview", "")).strip() in _LEGACY_EMPTY
    return out


def bounded_repr(obj: Any, limit: int = PREVIEW_CHARS) -> str:
    """A repr that costs O(limit), not O(len(obj)), for the common containers."""
    try:
        text = _bounded_repr(obj, limit, depth=0)
    except Exception as exc:  # a broken __repr__ must not break the summary
        text = f"<{type(obj).__name__}: repr failed: {type(exc).__name__}>"
    return text if len(text) <= limit else text[: max(limit - 1, 0)] + "…"


def _bounded_repr(obj: Any, limit: int, depth: int) -> str:
    if depth > 3:
        return "…"
    module = type(obj).__module__ or ""
    if module.startswith("numpy") and getattr(obj, "shape", None) == () and hasattr(obj, "item"):
        return repr(obj.item())  # a NumPy scalar reads as the Python number it holds
    if isinstance(obj, str):
        return repr(obj[: limit + 1])
    if isinstance(obj, bytes | bytearray):
        return repr(obj[: limit + 1])
    if isinstance(obj, bool | int | float | complex | type(None)):
        text = repr(obj)
        return text if len(text) <= limit * 2 else text[:limit] + "…"
    if isinstance(obj, list | tuple | set | frozenset):
        brackets = {list: "[]", tuple: "()", set: "{}", frozenset: "{}"}.get(type(obj), "[]")
        open_, close = brackets[0], brackets[1]
        parts: list[str] = []
        used = 0
        for i, item in enumerate(obj):
            if i >= SAMPLE_ITEMS or used > limit:
                parts.append("…")
                break
            part = _bounded_repr(item, limit, depth + 1)
            parts.append(part)
            used += len(part) + 2
        return open_ + ", ".join(parts) + close
    if isinstance(obj, dict):
        parts = []
        used = 0
        for i, (k, v) in enumerate(obj.items()):
            if i >= SAMPLE_ITEMS or used > limit:
                parts.append("…")
                break
            part = f"{_bounded_repr(k, limit, depth + 1)}: {_bounded_repr(v, limit, depth + 1)}"
            parts.append(part)
            used += len(part) + 2
        return "{" + ", ".join(parts) + "}"
    if module.startswith("numpy") and hasattr(obj, "shape") and hasattr(obj, "ravel"):
        flat = obj.ravel()[:SAMPLE_ITEMS]
        return (
            "array(["
            + ", ".join(repr(x.item() if hasattr(x, "item") else x) for x in flat)
            + (", …])" if obj.size > SAMPLE_ITEMS else "])")
        )
    if module.startswith("pandas") and type(obj).__name__ == "Series":
        head = obj.head(SAMPLE_ITEMS).tolist()
        return _bounded_repr(head, limit, depth + 1)
    if module.startswith("pandas") and type(obj).__name__ == "DataFrame":
        return _frame_preview(obj, limit)
    stand_in = short_text(obj)  # a lazy frame's repr may run its plan
    if stand_in:
        return stand_in
    text = repr(obj)  # other objects: their own repr, cut afterwards
    return text


def _frame_preview(df: Any, limit: int) -> str:
    if len(df) == 0:
        return "(empty)"
    row = df.iloc[0]
    parts = []
    for col in list(df.columns)[:MAX_COLUMNS]:
        parts.append(f"{col}={_bounded_repr(row[col], 20, 2)}")
    return "first row: " + ", ".join(parts)


def _size_of(obj: Any) -> int | None:
    """Memory size with bounded cost: deep for frames/arrays, shallow otherwise."""
    try:
        module = type(obj).__module__ or ""
        if module.startswith("pandas") and hasattr(obj, "memory_usage"):
            usage = obj.memory_usage(index=True, deep=False)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
        if module.startswith("numpy") and hasattr(obj, "nbytes"):
            return int(obj.nbytes)
        if module.startswith("pyarrow") and hasattr(obj, "nbytes"):
            return int(obj.nbytes)
        return sys.getsizeof(obj)
    except Exception:
        return None


def _shape_of(obj: Any) -> tuple[tuple[int, ...] | None, int | None]:
    """(shape, None) for an object with a tuple `shape`, (None, len) for other sized ones."""
    try:
        shape = getattr(obj, "shape", None)
        if isinstance(shape, tuple) and not isinstance(obj, type):
            return tuple(int(s) for s in shape), None
        if isinstance(obj, str | bytes | list | tuple | dict | set | frozenset | bytearray):
            return None, len(obj)
        if hasattr(obj, "__len__") and not isinstance(obj, type):
            return None, len(obj)
    except Exception:
        pass
    return None, None


def _dims_text(shape: tuple[int, ...] | None, length: int | None) -> str:
    if shape is not None:
        return "x".join(str(s) for s in shape) if shape else "scalar"
    return "" if length is None else f"len {length}"


def signature_of(func: Any) -> str:
    name = getattr(func, "__name__", type(func).__name__)
    try:
        sig = str(inspect.signature(func))
    except (TypeError, ValueError):
        sig = "(...)"
    prefix = "async " if inspect.iscoroutinefunction(func) else ""
    return f"{prefix}{name}{sig}"


def first_doc_lines(obj: Any, limit: int = 300) -> str:
    doc = inspect.getdoc(obj) or ""
    doc = doc.strip()
    if len(doc) > limit:
        doc = doc[: limit - 1] + "…"
    return doc


def type_schema(cls: type, include_doc: bool = True) -> str:
    """Fields for dataclass/pydantic/enum, public method signatures for plain classes."""
    if issubclass(cls, enum.Enum):
        members = ", ".join(f"{m.name}={m.value!r}" for m in list(cls)[:20])
        return f"enum members: {members}"
    if dataclasses.is_dataclass(cls):
        parts = []
        for f in dataclasses.fields(cls):
            ann = f.type if isinstance(f.type, str) else getattr(f.type, "__name__", str(f.type))
            parts.append(f"{f.name}: {ann}")
        return f"dataclass fields: {', '.join(parts)}"
    model_fields = getattr(cls, "model_fields", None)
    if isinstance(model_fields, dict) and model_fields:
        parts = []
        for fname, finfo in model_fields.items():
            ann = getattr(finfo, "annotation", None)
            parts.append(f"{fname}: {getattr(ann, '__name__', ann)}")
        return f"fields: {', '.join(parts)}"
    try:
        init_sig = str(inspect.signature(cls))
    except (TypeError, ValueError):
        init_sig = "(...)"
    methods = method_lines(cls, include_doc)
    text = f"{cls.__name__}{init_sig}"
    if methods:
        text += "; methods: " + "; ".join(methods)
    return text


def method_lines(cls: type, include_doc: bool = True, limit: int = 15) -> list[str]:
    """`.name(args) -> T  # first doc line` for each public method of a plain class."""
    if issubclass(cls, enum.Enum):
        return []
    methods: list[str] = []
    for name, member in inspect.getmembers(cls, predicate=inspect.isfunction):
        if name.startswith("_"):
            continue
        if len(methods) >= limit:
            methods.append("…")
            break
        try:
            sig = str(inspect.signature(member)).replace("(self, ", "(").replace("(self)", "()")
        except (TypeError, ValueError):
            sig = "(...)"
        line = f".{name}{sig}"
        if include_doc:
            doc = first_doc_lines(member, 120).splitlines()
            if doc:
                line += f"  # {doc[0]}"
        methods.append(line)
    return methods


def every_value_missing(obj: Any) -> bool:
    """A non-empty pandas Series or 1-D NumPy array with no value but NaN, None or NaT: what
    a lookup, reindex or map that matched nothing leaves. Integer and bool data never are."""
    if getattr(obj, "ndim", None) != 1 or len(obj) == 0 or obj.dtype.kind in "iub":
        return False
    import pandas as pd

    values = obj.array if hasattr(obj, "array") else obj
    if not (pd.isna(values[0]) and pd.isna(values[-1])):  # the common case, in O(1)
        return False
    return bool(obj.count() == 0) if hasattr(obj, "count") else bool(pd.isna(obj).all())


def holds_nothing(obj: Any) -> bool:
    """None, a zero or NaN number, an empty str/bytes/list/tuple/dict/set, or an array or
    frame with a zero-length dimension: what a filter that matched nothing leaves."""
    try:
        if obj is None:
            return True
        if type(obj) in (int, float):  # exact types: bool is no number here, as in its repr
            return bool(obj == 0 or obj != obj)
        if isinstance(obj, str | bytes | bytearray | list | tuple | dict | set | frozenset):
            return len(obj) == 0
        shape = getattr(obj, "shape", None)
        if not isinstance(shape, tuple) or isinstance(obj, type):
            return False
        if shape:
            return any(int(s) == 0 for s in shape)
        module = type(obj).__module__ or ""
        if module.startswith("numpy") and hasattr(obj, "item"):  # a NumPy scalar, 0-d array
            value = obj.item()
            return type(value) in (int, float) and bool(value == 0 or value != value)
    except Exception:
        pass
    return False


_SIZED_BUILTINS = (str, bytes, bytearray, list, tuple, dict, set, frozenset)
_SHAPED_MODULES = ("numpy", "pandas", "pyarrow")
# The type's own slots, read past anything a metaclass defines (its `__eq__`, `__mro__`,
# `__dict__` or `__module__` may be model-written and never return).
_TYPE_MODULE = type.__dict__["__module__"]
_TYPE_QUALNAME = type.__dict__["__qualname__"]
_TYPE_MRO = type.__dict__["__mro__"]
_TYPE_DICT = type.__dict__["__dict__"]
_C_DESCRIPTORS = (
    types.MethodDescriptorType,
    types.WrapperDescriptorType,
    types.GetSetDescriptorType,
    types.MemberDescriptorType,
)


def _own_attribute(kind: type, name: str) -> object:
    """The first definition of *name* along *kind*'s MRO, found without running its code."""
    for klass in _TYPE_MRO.__get__(kind, type):
        found = _TYPE_DICT.__get__(klass, type).get(name)
        if found is not None:
            return found
    return None


def _library_code(found: object) -> bool:
    """Whether *found* (a class attribute) is C code, or a function or property of numpy,
    pandas or pyarrow themselves: judged by the file its code lives in, never by a
    `__module__` a class can set."""
    if isinstance(found, _C_DESCRIPTORS):
        return True
    function = found.fget if isinstance(found, property) else found
    if not isinstance(function, types.FunctionType):
        return False
    filename = function.__code__.co_filename
    for package in _SHAPED_MODULES:
        module = sys.modules.get(package)
        where = getattr(module, "__file__", None)
        if isinstance(where, str) and filename.startswith(os.path.dirname(where) + os.sep):
            return True
    return False


def library_attribute(kind: type, name: str) -> bool:
    """Whether *kind*'s attribute *name* is C code or the data libraries' own (so reading
    it runs no model-written code); False where *kind* has no such attribute."""
    return _library_code(_own_attribute(kind, name))


def sizeof_without_user_code(obj: Any) -> int:
    """`sys.getsizeof(obj)` unless its class's `__sizeof__` is model-written (then the bare
    object's size): C code and the data libraries' own are trusted to return."""
    if library_attribute(type(obj), "__sizeof__"):
        return sys.getsizeof(obj)
    return object.__sizeof__(obj)


def _fingerprint(obj: Any) -> str:
    """Type, identity and, for builtins and the data libraries only, size: computed without
    running any code of the object (a model-written `__len__`, `shape` or `__class__` may
    never return, and this runs around every cell)."""
    kind = type(obj)
    qualname = _TYPE_QUALNAME.__get__(kind, type)
    dims = ""
    if any(kind is sized for sized in _SIZED_BUILTINS):
        dims = f"len {len(obj)}"
    elif str(_TYPE_MODULE.__get__(kind, type) or "").startswith(_SHAPED_MODULES) and (
        library_attribute(kind, "shape")
    ):
        shape = getattr(obj, "shape", None)  # the library's own attribute: trusted
        if isinstance(shape, tuple):
            dims = _dims_text(tuple(int(s) for s in shape), None)
    return f"{qualname}:{id(obj)}:{dims}"


def summarize(name: str, obj: Any, description: str = "") -> VarInfo:
    """Describe one object with bounded cost."""
    if isinstance(obj, types.ModuleType):
        return VarInfo(
            name=name,
            kind="module",
            type_name="module",
            preview=getattr(obj, "__name__", ""),
            description=description,
            fingerprint=f"module:{id(obj)}",
        )
    if isinstance(obj, type):
        return VarInfo(
            name=name,
            kind="type",
            type_name="type",
            signature=type_schema(obj),
            doc=first_doc_lines(obj, 200),
            methods=method_lines(obj),
            description=description,
            fingerprint=f"type:{id(obj)}",
        )
    if isinstance(obj, types.FunctionType | types.BuiltinFunctionType | types.MethodType) or (
        callable(obj) and inspect.isroutine(obj)
    ):
        return VarInfo(
            name=name,
            kind="function",
            type_name=str(type(obj).__name__),
            signature=signature_of(obj),
            doc=first_doc_lines(obj),
            description=description,
            fingerprint=f"function:{id(obj)}",
        )
    found = lazy_facts(obj)
    if found is not None:  # its shape, len and repr would compute it
        return _lazy_row(name, obj, found, description)
    shape, length = _shape_of(obj)
    info = VarInfo(
        name=name,
        kind="variable",
        type_name=type(obj).__name__,
        shape=shape,
        length=length,
        size_bytes=_size_of(obj),
        description=description,
        fingerprint=f"{type(obj).__qualname__}:{id(obj)}:{_dims_text(shape, length)}",
        is_empty=holds_nothing(obj),
    )
    describe = getattr(type(obj), "__cave_describe__", None)
    if callable(describe):  # objects that say how to use them (e.g. a sub-agent)
        try:
            info.preview = " ".join(str(describe(obj, name)).split())[:DESCRIBE_CHARS]
            return info
        except Exception:
            pass
    module = type(obj).__module__ or ""
    try:
        if module.startswith("pandas") and type(obj).__name__ == "DataFrame":
            cols = list(obj.columns)
            dtypes = obj.dtypes
            info.columns = [
                Column(str(c), str(dtypes.iloc[i])) for i, c in enumerate(cols[:MAX_COLUMNS])
            ]
            info.more_columns = max(len(cols) - MAX_COLUMNS, 0)
            past = cols[MAX_COLUMNS : MAX_COLUMNS + MORE_NAMES]
            info.more_names = [str(c)[:NAME_CHARS] for c in past]
        elif (module.startswith("pandas") and type(obj).__name__ == "Series") or (
            module.startswith("numpy") and hasattr(obj, "dtype")
        ):
            info.dtype = str(obj.dtype)
            info.all_missing = every_value_missing(obj)
    except Exception:
        pass
    info.preview = bounded_repr(obj, PREVIEW_CHARS)
    return info


def _lazy_row(name: str, obj: Any, found: Facts, description: str) -> VarInfo:
    """The row of a lazy or distributed frame: its schema and what is known without
    computing it (rows only when known)."""
    columns = [Column(c, t) for c, t in found.columns[:MAX_COLUMNS]]
    shape = None if found.rows is None or not found.columns else (found.rows, len(found.columns))
    mode = "" if found.mode is Mode.IN_MEMORY else found.text()
    return VarInfo(
        name=name,
        kind="variable",
        type_name=found.type_name,
        shape=shape,
        preview=found.text() if mode else _first_row(obj, found.rows),
        columns=columns,
        more_columns=max(len(found.columns) - MAX_COLUMNS, 0),
        description=description,
        fingerprint=f"{type(obj).__qualname__}:{id(obj)}:{_dims_text(shape, None)}",
        is_empty=found.rows == 0,
        lazy=mode,
        small_result=found.small_result if mode else "",
    )


def _first_row(frame: Any, rows: int | None) -> str:
    """An in-memory Polars frame's first row, as `_frame_preview` writes a pandas one's."""
    if not rows:
        return "(empty)"
    first = frame.row(0, named=True)
    parts = [f"{c}={_bounded_repr(v, 20, 2)}" for c, v in list(first.items())[:MAX_COLUMNS]]
    text = "first row: " + ", ".join(parts)
    return text if len(text) <= PREVIEW_CHARS else text[: PREVIEW_CHARS - 1] + "…"


TRUSTED_MODULES = frozenset(
    {"builtins", "datetime", "decimal", "fractions", "collections", "types", "functools",
     "re", "pathlib", "uuid", "numpy", "pandas", "pyarrow", "enum", "typing"}
)  # fmt: skip


def describable_without_user_code(obj: Any, depth: int = 0) -> bool:
    """True when describing *obj* runs no code the model wrote (no user `__repr__`, `__len__`…).

    Checks the object's type and, for containers, the sampled items `bounded_repr`
    would visit. Lets the common case (frames, arrays, builtins) be described inline.
    """
    kind = type(obj)
    if kind is type:
        return True  # a plain class: its schema comes from inspect, not from its code
    module = (getattr(kind, "__module__", "") or "").split(".", 1)[0]
    if module not in TRUSTED_MODULES:
        return False
    if depth < 3 and isinstance(obj, list | tuple | set | frozenset):
        return all(
            describable_without_user_code(item, depth + 1)
            for _, item in zip(range(SAMPLE_ITEMS), obj, strict=False)
        )
    if depth < 3 and isinstance(obj, dict):
        sample = zip(range(SAMPLE_ITEMS), obj.items(), strict=False)
        return all(describable_without_user_code(pair, depth + 1) for _, pair in sample)
    return True


# Upstream 0.8's names for outputs too long to show the model (`_output_1`, ...): values
# the model and the user open, so listed although they start with an underscore.
PERSISTED_OUTPUT_NAME = re.compile(r"_output_[0-9]+")


def is_user_name(name: str, hidden: set[str] | frozenset[str] = HIDDEN_NAMES) -> bool:
    listed = not name.startswith("_") or PERSISTED_OUTPUT_NAME.fullmatch(name) is not None
    return listed and name not in hidden


MISSING_NAMES_SHOWN = 8  # names listed when none is close to a missing one


def close_names(name: str, names: Iterable[str], n: int = 3) -> list[str]:
    """Up to *n* names the user may have meant by *name*: near spellings first (difflib),
    then names that contain it (`nosuch` → `nosuch_frame_2024`, too long for difflib)."""
    pool = sorted(set(names))
    close = difflib.get_close_matches(name, pool, n=n)
    wanted = name.lower()
    for other in pool:
        if len(close) >= n:
            break
        if wanted and other not in close and wanted in other.lower():
            close.append(other)
    return close


def missing_name_message(name: str, names: Iterable[str]) -> str:
    """The error for a name the runtime does not hold: the close names, else what it holds."""
    pool = sorted(set(names))
    close = close_names(name, pool)
    if close:
        hint = f"; did you mean {', '.join(close)}?"
    elif pool:
        shown = ", ".join(pool[:MISSING_NAMES_SHOWN])
        more = len(pool) - MISSING_NAMES_SHOWN
        hint = f"; it holds {shown}" + (f" and {more} more (/vars)" if more > 0 else "")
    else:
        hint = "; it holds no variables yet"
    return f"no variable named {name!r} in the runtime (not managed by it){hint}"


def summarize_namespace(
    ns: dict[str, Any],
    hidden: set[str] | frozenset[str] = frozenset(),
    descriptions: dict[str, str] | None = None,
    limit: int | None = 10_000,
    rows: list[VarInfo] | None = None,
    on_item: Any = None,
) -> list[VarInfo]:
    """Summarise up to *limit* user names of *ns* (all of them with None), in insertion order.

    *rows* (if given) is filled as the walk goes, so a watchdog can keep what was
    done when it has to stop a walk stuck in some object's `__repr__`; *on_item*
    is called with each name before its object is described.
    """
    descriptions = descriptions or {}
    rows = [] if rows is None else rows
    for name in list(ns):
        if not is_user_name(name) or (name in hidden and name not in descriptions):
            continue
        if on_item is not None:
            on_item(name)
        try:
            obj = ns[name]
        except KeyError:  # deleted meanwhile
            continue
        try:
            rows.append(summarize(name, obj, descriptions.get(name, "")))
        except Exception as exc:  # a hostile or broken object must not break the listing
            rows.append(
                VarInfo(name, "variable", type(obj).__name__, preview=f"<{type(exc).__name__}>")
            )
        if limit is not None and len(rows) >= limit:
            break
    return rows


def user_names(
    ns: dict[str, Any],
    hidden: set[str] | frozenset[str] = frozenset(),
    descriptions: dict[str, str] | None = None,
) -> list[str]:
    """The names `summarize_namespace` lists, in the same order (no object is looked at)."""
    descriptions = descriptions or {}
    return [n for n in list(ns) if is_user_name(n) and not (n in hidden and n not in descriptions)]


def bare_row(name: str, obj: Any, description: str = "", preview: str = "…") -> VarInfo:
    """A row naming *obj*'s type only (no code of the object runs): for names not described."""
    return VarInfo(name, "variable", type(obj).__name__, preview=preview, description=description)


def fingerprints(
    ns: dict[str, Any], hidden: set[str] | frozenset[str] = frozenset()
) -> dict[str, str]:
    """Cheap per-name change detectors (type, identity, size), computed without running
    any code the model wrote (see `_fingerprint`)."""
    out = {}
    for name, obj in list(ns.items()):
        if is_user_name(name) and name not in hidden:
            try:
                out[name] = _fingerprint(obj)
            except Exception:
                out[name] = f"?:{id(obj)}"
    return out
