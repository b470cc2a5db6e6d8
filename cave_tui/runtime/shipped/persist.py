"""What a runtime saves of its namespace: every user name, how it is kept, and a change digest.

`persistable()` lists every user name (never bounded by a display budget) as `Persistable`
rows: a value saved in a file format, a module saved as its import name, a function or
class the model defined, kept as the source that defined it (re-run inside the runtime to
restore it, so no bytes made by model code are unpickled), or something that cannot be
saved, with the reason. Values under a size limit carry a digest of their pickled bytes,
so a snapshot rewrites only what changed, in-place mutations included.
Standard library only at module level: the kernel runs this file as `_cave_persist`.
"""

from __future__ import annotations

import ast
import enum
import hashlib
import inspect
import io
import os
import pickle
import textwrap
import types
import weakref
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from cave_tui.runtime.shipped.lazy import streams, unsaved_reason  # kernel: _cave_lazy

DEFINITION_SCAN_CHARS = 1_000_000  # a bigger cell is data (pasted literals), not definitions
_UNBOUND = object()
_GENERATORS = (types.GeneratorType, types.CoroutineType, types.AsyncGeneratorType)


class Keep(enum.Enum):
    """How a name is kept by a dump or a snapshot."""

    VALUE = "value"  # the object, in a file format that fits it
    MODULE = "module"  # `import <module> as <name>` on restore
    SOURCE = "source"  # the code that defined it, run again on restore
    NOTHING = "nothing"  # cannot be saved; `reason` says why


@dataclass(frozen=True)
class Persistable:
    """One user name as a dump sees it; `from_dict(to_dict())` gives it back through JSON."""

    name: str
    keep: Keep
    type_name: str
    module: str = ""  # MODULE: the module's import name
    digest: str | None = None  # VALUE: hash of its pickled bytes when under the digest limit
    size: int | None = None  # VALUE: the size of those pickled bytes (with the digest)
    source: str = ""  # SOURCE: the statement that defines it
    order: int = 0  # SOURCE: definitions are run again in this order
    reason: str = ""  # NOTHING: why it cannot be saved
    streams: bool = False  # NOTHING: a lazy frame an explicit dump streams to Parquet

    def to_dict(self) -> dict[str, Any]:
        data = dict(self.__dict__)
        data["keep"] = self.keep.value
        return data

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> Persistable:
        """A row from its `to_dict()`; raises ValueError or TypeError when malformed."""
        digest = data.get("digest")
        return cls(
            name=str(data["name"]),
            keep=Keep(data["keep"]),
            type_name=str(data.get("type_name") or "?"),
            module=str(data.get("module") or ""),
            digest=None if digest is None else str(digest),
            size=None if data.get("size") is None else int(data["size"]),
            source=str(data.get("source") or ""),
            order=int(data.get("order") or 0),
            reason=str(data.get("reason") or ""),
            streams=bool(data.get("streams")),
        )


# -- the definitions a cell made ---------------------------------------------------------------
@dataclass
class Definition:
    """The statement that defined a name, and a reference to the object it made."""

    source: str
    order: int
    target: Callable[[], Any]  # returns the object the statement made (None once it is gone)


class Definitions:
    """The source of each function, class and lambda a cell defined at top level, by name.

    `record` runs after each cell with the names the cell rebound; `source_for` gives the
    source back only while the name is still bound to the very object that statement made.
    """

    def __init__(self) -> None:
        self._by_name: dict[str, Definition] = {}
        self._order = 0

    def record(self, code: str, ns: Mapping[str, Any], rebound: Iterable[str]) -> None:
        """Note the top-level definitions of *code* (an IPython-transformed cell) whose
        names the cell rebound and which still hold what the definition made."""
        names = set(rebound)
        if not names or len(code) > DEFINITION_SCAN_CHARS:
            return
        try:
            tree = ast.parse(code)
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            return
        lines = code.splitlines(keepends=True)
        for node in tree.body:
            found = definition_of(node, code, lines)
            if found is None:
                continue
            name, source, is_lambda = found
            if name not in names or name not in ns:
                continue
            obj = ns[name]
            try:
                made = _made_by(obj, name, is_lambda)
            except Exception:  # a decorator's hostile result: not kept as source, saved as is
                made = False
            if not made:
                continue
            self._order += 1
            self._by_name[name] = Definition(source, self._order, _reference(obj))

    def source_for(self, name: str, obj: Any) -> Definition | None:
        definition = self._by_name.get(name)
        if definition is None or definition.target() is not obj:
            return None
        return definition

    def clear(self) -> None:
        self._by_name.clear()


def definition_of(node: ast.stmt, code: str, lines: list[str]) -> tuple[str, str, bool] | None:
    """(name, source, is_lambda) when *node* defines a function, a class or a lambda."""
    if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        last = node.end_lineno or node.lineno
        return node.name, "".join(lines[first - 1 : last]).rstrip() + "\n", False
    if (
        isinstance(node, ast.Assign)
        and len(node.targets) == 1
        and isinstance(node.targets[0], ast.Name)
        and isinstance(node.value, ast.Lambda)
    ):
        segment = ast.get_source_segment(code, node)
        if segment:
            return node.targets[0].id, segment + "\n", True
    return None


def _made_by(obj: Any, name: str, is_lambda: bool) -> bool:
    """Whether *obj* is what a definition of *name* makes (a decorator may wrap it)."""
    if is_lambda:
        return isinstance(obj, types.FunctionType) and obj.__name__ == "<lambda>"
    inner = obj
    for _ in range(10):  # decorators that keep `__wrapped__` (functools.wraps, lru_cache)
        if getattr(inner, "__name__", None) == name:
            return callable(obj)
        inner = getattr(inner, "__wrapped__", None)
        if inner is None:
            break
    return False


def _reference(obj: Any) -> Callable[[], Any]:
    try:
        return weakref.ref(obj)
    except TypeError:
        return lambda: obj


def _source_from_lines(obj: Any, name: str) -> str | None:
    """The source of a plain function the model defined inside a block (`if`, `for`,
    `try`): found through the cell's lines, and only when it defines *name* itself.

    Cells have no file on disk (IPython keeps their lines in `linecache`); a function
    from a file is the host's or a library's, and is not the model's to keep as source.
    """
    if not isinstance(obj, types.FunctionType) or obj.__closure__:
        return None
    if obj.__name__ != name or obj.__module__ != "__main__":
        return None
    if os.path.exists(obj.__code__.co_filename):
        return None
    try:
        source = textwrap.dedent(inspect.getsource(obj))
        body = ast.parse(source).body
    except (OSError, TypeError, SyntaxError, ValueError, IndentationError):
        return None
    if len(body) != 1 or not isinstance(body[0], ast.FunctionDef | ast.AsyncFunctionDef):
        return None
    return source if body[0].name == name else None


# -- digests -------------------------------------------------------------------------------------
class CappedBuffer(io.BytesIO):
    """A BytesIO that refuses to grow past *limit* (a digest, or a kernel checkpoint,
    costs at most that much)."""

    class Full(Exception):
        """The buffer would grow past its limit."""

    def __init__(self, limit: int) -> None:
        super().__init__()
        self.limit = limit

    def write(self, data: Any) -> int:
        if self.tell() + memoryview(data).nbytes > self.limit:
            raise CappedBuffer.Full()
        return super().write(data)


def content_digest(obj: Any, limit: int) -> tuple[str, int] | None:
    """A hash of *obj*'s pickled bytes (pickle, else dill) and their size, when they fit in
    *limit* bytes.

    Equal digests mean equal pickles, hence the same content: a snapshot keeps the file.
    None when the object is bigger or cannot be pickled (decided by other means then).
    """
    if limit <= 0 or _buffer_bytes(obj) > limit:
        return None
    for tag, make in (("p", _pickler), ("d", _dill_pickler)):
        sink = CappedBuffer(limit)
        try:
            pickler = make(sink)
            if pickler is None:
                return None
            pickler.dump(obj)
        except CappedBuffer.Full:
            return None
        except Exception:  # not picklable this way (or its __reduce__ failed): try the next
            continue
        digest = hashlib.blake2b(sink.getbuffer(), digest_size=16).hexdigest()
        return tag + digest, sink.tell()
    return None


def _buffer_bytes(obj: Any) -> int:
    """The bytes of an array's or a frame's buffers (0 for other objects), known without
    pickling: a non-contiguous array would be copied whole before the cap could stop it."""
    try:
        module = type(obj).__module__ or ""
        if module.startswith("pandas") and hasattr(obj, "memory_usage"):
            usage = obj.memory_usage(index=True, deep=False)
            return int(usage.sum()) if hasattr(usage, "sum") else int(usage)
        if module.startswith(("numpy", "pyarrow")) and hasattr(obj, "nbytes"):
            return int(obj.nbytes)
    except Exception:
        pass
    return 0


def _pickler(sink: io.BytesIO) -> Any:
    return pickle.Pickler(sink, protocol=5)


def _dill_pickler(sink: io.BytesIO) -> Any:
    try:
        import dill
    except ImportError:
        return None
    return dill.Pickler(sink, protocol=5, recurse=True)


def source_digest(source: str) -> str:
    return "s" + hashlib.blake2b(source.encode("utf-8"), digest_size=16).hexdigest()


# -- the listing ---------------------------------------------------------------------------------
def describe(
    name: str, obj: Any, definitions: Definitions | None, digest_below: int
) -> Persistable:
    """How *name* is kept; a value's digest is computed when *digest_below* > 0."""
    try:
        return _describe(name, obj, definitions, digest_below)
    except Exception:  # a hostile object (a __getattr__ that raises…): try its value
        return Persistable(name, Keep.VALUE, getattr(type(obj), "__name__", "?"))


def _describe(
    name: str, obj: Any, definitions: Definitions | None, digest_below: int
) -> Persistable:
    type_name = getattr(type(obj), "__name__", "?")
    if isinstance(obj, types.ModuleType):
        module = getattr(obj, "__name__", "") or ""
        if not module or module.startswith("__"):
            return Persistable(
                name, Keep.NOTHING, "module", reason="a module that cannot be imported by name"
            )
        return Persistable(name, Keep.MODULE, "module", module=module)
    if isinstance(obj, _GENERATORS):
        return Persistable(
            name,
            Keep.NOTHING,
            type_name,
            reason=f"a {type_name}: its paused state cannot be saved; create it again",
        )
    definition = definitions.source_for(name, obj) if definitions is not None else None
    if definition is not None:
        return Persistable(
            name,
            Keep.SOURCE,
            type_name,
            digest=source_digest(definition.source),
            source=definition.source,
            order=definition.order,
        )
    source = _source_from_lines(obj, name)
    if source is not None:
        return Persistable(
            name, Keep.SOURCE, type_name, digest=source_digest(source), source=source, order=1 << 30
        )
    computes = unsaved_reason(obj)  # a lazy frame: pickling or writing it runs its plan
    if computes is not None:
        return Persistable(name, Keep.NOTHING, type_name, reason=computes, streams=streams(obj))
    digested = content_digest(obj, digest_below)
    if digested is None:
        return Persistable(name, Keep.VALUE, type_name)
    return Persistable(name, Keep.VALUE, type_name, digest=digested[0], size=digested[1])


def persistable(
    ns: Mapping[str, Any],
    names: Iterable[str],
    definitions: Definitions | None = None,
    digest_below: int = 0,
    on_item: Callable[[str], None] | None = None,
) -> list[Persistable]:
    """Every one of *names* still bound in *ns*, described by `describe` (no cap, no budget)."""
    rows = []
    for name in names:
        obj = ns.get(name, _UNBOUND)
        if obj is _UNBOUND:  # deleted meanwhile
            continue
        if on_item is not None:
            on_item(name)
        rows.append(describe(name, obj, definitions, digest_below))
    return rows
