"""What a host can put into a runtime: a `Variable`, a `Function` or a `Type`.

The names and constructor signatures follow upstream CaveAgent so its examples
port by changing the import. Descriptions are rendered live by
`cave_tui.runtime.shipped.summary`, not frozen here at injection time.
"""

from __future__ import annotations

import inspect
import keyword
import os
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from cave_tui.runtime import upstream
from cave_tui.runtime.shipped.summary import signature_of


def validate_name(name: object) -> str:
    """Return *name* if it is a str that can be bound in a namespace, else raise ValueError."""
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"{name!r} is not a valid Python identifier")
    if keyword.iskeyword(name):
        raise ValueError(f"{name!r} is a Python keyword and cannot name a variable")
    return name


class Variable:
    """A named object placed in the runtime namespace."""

    by_host: bool = False  # the host's own tool (a skill's): never named as the user's
    described: bool = True  # listed in the prompt (`describe_*`); False: a raw binding
    listed: bool = True  # False: bound but left out of namespace listings (bindings.py)

    def __init__(self, name: str, value: Any = None, description: str | None = None) -> None:
        self.name = validate_name(name)
        self.value = value
        self.description = description
        # Restored from a dump or a snapshot that says the model made it: not one the user gave.
        self.made_by_model = False

    @property
    def type_name(self) -> str:
        return type(self.value).__name__

    def __repr__(self) -> str:
        return f"Variable({self.name!r}, <{self.type_name}>)"

    def __str__(self) -> str:
        """Upstream's prompt entry (`describe_variables`)."""
        return upstream.describe_variable(self)


class Function:
    """A callable the model may call; its signature and docstring go in the prompt."""

    by_host: bool = False  # the host's own tool (a skill's): never named as the user's
    described: bool = True  # listed in the prompt (`describe_*`); False: a raw binding

    def __init__(
        self,
        func: Callable[..., Any],
        description: str | None = None,
        include_doc: bool = True,
        name: str | None = None,
    ) -> None:
        if not callable(func):
            raise TypeError(f"Function() needs a callable, got {type(func).__name__}")
        self.func = func
        self.description = description
        self.include_doc = include_doc
        self.name = validate_name(name or getattr(func, "__name__", type(func).__name__))
        self.is_async = inspect.iscoroutinefunction(func)

    @property
    def signature(self) -> str:
        """`[async ]name(params) -> T`, as upstream shows it."""
        return signature_of(self.func)

    @property
    def doc(self) -> str | None:
        """The stripped docstring when `include_doc`, else None (upstream's attribute)."""
        doc = (getattr(self.func, "__doc__", None) or "").strip() if self.include_doc else ""
        return doc or None

    @property
    def value(self) -> Callable[..., Any]:
        return self.func

    def __repr__(self) -> str:
        return f"Function({self.name!r})"

    def __str__(self) -> str:
        """Upstream's prompt entry (`describe_functions`)."""
        return upstream.describe_function(self)


class Type:
    """A class the model may instantiate or check against; its schema goes in the prompt."""

    by_host: bool = False  # the host's own tool (a skill's): never named as the user's
    described: bool = True  # listed in the prompt (`describe_*`); False: a raw binding

    def __init__(
        self,
        value: type,
        description: str | None = None,
        include_schema: bool = True,
        include_doc: bool = True,
    ) -> None:
        if not isinstance(value, type):
            raise ValueError(f"Type value must be a class, got {type(value).__name__}")
        self.value = value
        self.name = validate_name(value.__name__)
        self.description = description
        self.include_schema = include_schema
        self.include_doc = include_doc
        self.automatic = False  # True when injected because a Variable or Function names it

    def __repr__(self) -> str:
        return f"Type({self.name!r})"

    def __str__(self) -> str:
        """Upstream's schema text (`describe_types`); "" when schema and doc are hidden."""
        return upstream.describe_type(self)


@dataclass(frozen=True, repr=False)
class Pickled:
    """Pickle (or dill) bytes, already verified, for a runtime to unpickle where cells run.

    Only a runtime whose `unpickles_out_of_process` is True takes a `Variable` holding one
    (the kernel runtime unpickles it inside the kernel, so code in the pickle never runs in
    the host); others get the unpickled object instead.
    """

    data: bytes
    format: str = "pickle"  # or "dill"

    def __repr__(self) -> str:
        return f"Pickled(<{len(self.data):,} bytes of {self.format}>)"


@dataclass(frozen=True)
class ParquetFile:
    """A parquet file, as it was when the host checked its footer, for an isolated runtime to
    read into a DataFrame where its cells run (the host never builds the frame). Only
    runtimes whose `isolated` is True take it."""

    path: str
    size: int
    mtime_ns: int
    rows: int = 0
    columns: int = 0

    def read_bytes(self) -> bytes:
        """The file's bytes; ValueError when it is no longer the file that was checked."""
        with open(self.path, "rb") as f:
            st = os.fstat(f.fileno())
            if (st.st_size, st.st_mtime_ns) != (self.size, self.mtime_ns):
                raise ValueError(f"{self.path} changed since it was injected")
            return f.read()


@dataclass(frozen=True)
class LazyScan:
    """A lazy frame to bind over files (`/inject PATH --lazy`): the runtime builds it where
    its cells run (`shipped/lazy.scan`), reading only metadata; the host reads no rows."""

    path: str  # a file, a directory or a glob
    format: str  # "parquet" or "csv"
    engine: str = "polars"  # or "dask"


Injectable = Variable | Function | Type
