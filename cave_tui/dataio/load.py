"""Loading files into Python objects, by format, cancellably and with progress.

`load_file` is meant to run on a worker thread (`load_file_async` does that): it
checks the `cancel` flag and reports `Progress` between chunks (Parquet row groups
or record batches, CSV chunks, byte blocks). The file's sha256, which sessions
record, is computed on a second thread while the file is parsed. Files under
`SMALL_FILE` bytes load in one call: they take a few tenths of a second.
Over 400 lines: one chunked, cancellable reader per format, each short; splitting them
would scatter the shared progress and cancel plumbing.
"""

from __future__ import annotations

import asyncio
import codecs
import concurrent.futures
import contextlib
import gzip
import hashlib
import importlib.util
import io
import json
import math
import os
import pickle
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from cave_tui.dataio.delimiter import SNIFF_CHARS, Delimited, sniff_delimited
from cave_tui.dataio.encoding import check_encoding, encoding_of, read_sample
from cave_tui.dataio.errors import DataIOError, LoadCancelled, TrustRequiredError
from cave_tui.dataio.formats import Format, detect_format, sniff
from cave_tui.dataio.progress import CancelLike, Monitor, ProgressCallback
from cave_tui.runtime.items import ParquetFile

if TYPE_CHECKING:
    from _typeshed import WriteableBuffer

SMALL_FILE = 32 << 20  # read in one call: a few tenths of a second at most
BLOCK = 8 << 20
CSV_CHUNK_ROWS = 250_000
JSONL_REPORT_LINES = 20_000
MIN_BATCH_ROWS = 65_536
READ_BUFFER = 1 << 20


@dataclass
class Loaded:
    """A loaded object and where it came from."""

    value: Any
    path: Path
    format: str
    bytes: int
    sha256: str | None
    seconds: float
    sha256_future: concurrent.futures.Future[str] | None = field(default=None, repr=False)
    encoding: str | None = None  # a text file's encoding when it is not UTF-8
    encoding_guessed: bool = False  # detected from the bytes, not named by the user
    delimited: Delimited | None = None  # how a CSV/TSV file was split

    @property
    def description(self) -> str:
        return describe_value(self.value)


def describe_value(value: Any) -> str:
    """`DataFrame 336,776×19`, `ndarray 10×3 float64`, `dict (3 items)`."""
    if isinstance(value, ParquetFile):  # the frame it will be, built in the kernel
        return f"DataFrame {value.rows:,}×{value.columns:,}"
    kind = type(value).__name__
    shape = getattr(value, "shape", None)
    if isinstance(shape, tuple) and shape:
        dims = "×".join(f"{int(s):,}" for s in shape)
        dtype = getattr(value, "dtype", None)
        return f"{kind} {dims}" + (f" {dtype}" if dtype is not None and kind == "ndarray" else "")
    with contextlib.suppress(TypeError):
        return f"{kind} ({len(value):,} items)"
    return kind


# -- hashing ----------------------------------------------------------------------
def file_sha256(path: str | Path, monitor: Monitor | None = None) -> str:
    """sha256 of a file, read in 1 MiB blocks (cancellable through *monitor*)."""
    digest = hashlib.sha256()
    buf = bytearray(1 << 20)
    view = memoryview(buf)
    with open(path, "rb") as f:
        while n := f.readinto(buf):
            digest.update(view[:n])
            if monitor is not None and monitor.cancelled:
                raise LoadCancelled(f"hashing {path} was cancelled")
    return digest.hexdigest()


HASH_INLINE_BELOW = 1 << 20  # files smaller than this are hashed after the parse, no thread


class _BackgroundHash:
    """Hash a file on its own thread (hashlib releases the GIL) while it is parsed."""

    def __init__(self, path: Path, monitor: Monitor) -> None:
        self.future: concurrent.futures.Future[str] = concurrent.futures.Future()
        self._stop = threading.Event()
        stop = Monitor(lambda: self._stop.is_set() or monitor.cancelled, None, str(path))
        self._thread = threading.Thread(
            target=self._run, args=(path, stop), name="cave-hash", daemon=True
        )
        self._thread.start()

    def _run(self, path: Path, monitor: Monitor) -> None:
        try:
            self.future.set_result(file_sha256(path, monitor))
        except BaseException as exc:
            self.future.set_exception(exc)

    def stop(self) -> None:
        self._stop.set()

    def result(self) -> str:
        return self.future.result()


# -- a file object that reports progress and honours cancel ------------------------
class _TrackedRaw(io.RawIOBase):
    """Counts the bytes read (for progress) and checks for cancellation on every read."""

    def __init__(self, f: io.RawIOBase, total: int, monitor: Monitor) -> None:
        self._f = f
        self.total = total
        self.pos = 0
        self._monitor = monitor

    def readable(self) -> bool:
        return True

    def readinto(self, b: WriteableBuffer) -> int:
        self._monitor.check()
        n = self._f.readinto(b) or 0
        self.pos += n
        return n

    def report(self, rows: int | None = None) -> None:
        self._monitor.report(self.pos, self.total, rows=rows)


@contextlib.contextmanager
def _open_tracked_report(
    path: Path, monitor: Monitor, decompress: bool = False
) -> Iterator[tuple[io.BufferedIOBase, _TrackedRaw]]:
    """`_open_tracked` that reports 0% first, so a front end can show the bar at once."""
    with _open_tracked(path, monitor, decompress) as (f, tracked):
        tracked.report()
        yield f, tracked


@contextlib.contextmanager
def _open_tracked(
    path: Path, monitor: Monitor, decompress: bool = False
) -> Iterator[tuple[io.BufferedIOBase, _TrackedRaw]]:
    total = path.stat().st_size
    with open(path, "rb", buffering=0) as raw:
        tracked = _TrackedRaw(raw, total, monitor)
        buffered: io.BufferedIOBase = io.BufferedReader(tracked, buffer_size=READ_BUFFER)
        if decompress:
            buffered = gzip.GzipFile(fileobj=buffered, mode="rb")
        yield buffered, tracked


def _is_gz(path: Path) -> bool:
    return path.name.lower().endswith(".gz")


# -- the loaders (path, monitor, trust) -> object ------------------------------------
def _load_parquet(path: Path, m: Monitor, trust: bool) -> Any:
    import pyarrow as pa
    import pyarrow.parquet as pq

    if path.stat().st_size <= SMALL_FILE:
        m.check()
        return pq.read_table(path, page_checksum_verification=True).to_pandas()
    pf = pq.ParquetFile(path, page_checksum_verification=True)
    meta = pf.metadata
    schema = pf.schema_arrow
    names = schema.names
    groups = meta.num_row_groups
    if groups >= 4:
        table = _read_row_groups(pf, m)
    elif len(names) > 1 and len(set(names)) == len(names):
        table = _read_column_chunks(pf, m)
    else:  # one wide column (or duplicate names): stream record batches
        rows = meta.num_rows
        batches = []
        done = 0
        size = max(MIN_BATCH_ROWS, math.ceil(rows / 16))
        for batch in pf.iter_batches(batch_size=size):
            m.report(done, rows, "rows")
            batches.append(batch)
            done += batch.num_rows
        table = pa.Table.from_batches(batches, schema=schema)
    m.report(1, 1, "files", stage="converting")
    return table.to_pandas()


def _parquet_file(path: Path, m: Monitor) -> ParquetFile:
    """The file as it is now, its footer checked: for an isolated runtime to read where its
    cells run (the host reads only the footer)."""
    import pyarrow.parquet as pq

    m.check()
    with open(path, "rb") as f:
        st = os.fstat(f.fileno())
        meta = pq.read_metadata(f)  # a corrupt footer fails here, in the host
    return ParquetFile(
        str(path.resolve()),
        st.st_size,
        st.st_mtime_ns,
        rows=meta.num_rows,
        columns=meta.num_columns,
    )


def _read_row_groups(pf: Any, m: Monitor) -> Any:
    """One row group per chunk: what `read_table` does, with a check between groups."""
    import pyarrow as pa

    meta = pf.metadata
    groups = [meta.row_group(i) for i in range(meta.num_row_groups)]
    total = sum(g.total_byte_size for g in groups)  # uncompressed bytes, from the metadata
    tables = []
    done = rows = 0
    for i, group in enumerate(groups):
        m.report(done, total, rows=rows)
        table = pf.read_row_group(i)
        tables.append(table)
        done += group.total_byte_size
        rows += table.num_rows
    return pa.concat_tables(tables) if tables else pf.schema_arrow.empty_table()


def _read_column_chunks(pf: Any, m: Monitor, steps: int = 8) -> Any:
    """Few row groups: read them a few columns at a time (about *steps* chunks in all).

    Each column is decoded whole, as `read_table` would, so this costs no more CPU
    than one call; progress is in compressed bytes from the file's metadata.
    """
    import pyarrow as pa

    meta = pf.metadata
    schema = pf.schema_arrow
    names = schema.names
    per = max(1, math.ceil(len(names) * meta.num_row_groups / steps))
    leaves = [meta.row_group(0).column(j).path_in_schema for j in range(meta.num_columns)]
    sizes: dict[str, int] = {}
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j, leaf in enumerate(leaves):
            top = leaf.split(".")[0]
            sizes[f"{i}/{top}"] = sizes.get(f"{i}/{top}", 0) + group.column(j).total_compressed_size
    total = sum(sizes.values())
    done = 0
    tables = []
    for i in range(meta.num_row_groups):
        columns: list[Any] = []
        for j in range(0, len(names), per):
            part = names[j : j + per]
            m.report(done, total)
            columns.extend(pf.read_row_group(i, columns=part).columns)
            done += sum(sizes.get(f"{i}/{name}", 0) for name in part)
        tables.append(pa.Table.from_arrays(columns, schema=schema))
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _load_feather(path: Path, m: Monitor, trust: bool) -> Any:
    import pyarrow as pa
    import pyarrow.ipc as ipc

    with open(path, "rb") as f:
        kind = sniff(f.read(8))
    if kind == "feather1":
        from pyarrow import feather

        m.check()
        return feather.read_table(path).to_pandas()
    with pa.OSFile(str(path)) as source:
        batches = []
        if kind == "arrow":
            reader = ipc.open_file(source)
            n = reader.num_record_batches
            for i in range(n):
                m.report(i, n, "record batches")
                batches.append(reader.get_batch(i))
        else:
            total = path.stat().st_size
            stream = ipc.open_stream(source)
            reader = stream
            for batch in stream:
                m.report(source.tell(), total)
                batches.append(batch)
        table = pa.Table.from_batches(batches, schema=reader.schema)
    m.report(1, 1, "files", stage="converting")
    return table.to_pandas()


def _load_delimited(path: Path, m: Monitor, layout: Delimited, encoding: str | None) -> Any:
    import pandas as pd

    compression: Literal["gzip"] | None = "gzip" if _is_gz(path) else None
    if path.stat().st_size <= SMALL_FILE:
        m.check()
        return pd.read_csv(
            path,
            compression=compression,
            encoding=encoding,
            sep=layout.sep,
            decimal=layout.decimal,
            thousands=layout.thousands,
        )
    chunks = []
    with _open_tracked_report(path, m) as (f, tracked):
        reader = pd.read_csv(
            f,
            chunksize=CSV_CHUNK_ROWS,
            compression=compression,
            encoding=encoding,
            sep=layout.sep,
            decimal=layout.decimal,
            thousands=layout.thousands,
        )
        rows = 0
        with reader:
            for chunk in reader:
                chunks.append(chunk)
                rows += len(chunk)
                tracked.report(rows)
    m.report(1, 1, "files", stage="converting")
    if len(chunks) == 1:
        return chunks[0]
    return pd.concat(chunks, ignore_index=True)


def _load_json(path: Path, m: Monitor, encoding: str | None) -> Any:
    with _open_tracked_report(path, m, decompress=_is_gz(path)) as (f, tracked):
        parts = []
        while block := f.read(BLOCK):
            parts.append(block)
            tracked.report()
    data = b"".join(parts)
    m.report(1, 1, "files", stage="converting")
    try:
        return json.loads(data.decode(encoding) if encoding else data)
    except json.JSONDecodeError as exc:
        raise DataIOError(
            f"{path}: invalid JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}",
            path=path,
        ) from None


def _load_jsonl(path: Path, m: Monitor, encoding: str | None) -> Any:
    records = []
    with _open_tracked_report(path, m, decompress=_is_gz(path)) as (f, tracked):
        # Decoded as a stream: a UTF-16 line ends in b"\n\x00", not at the first b"\n".
        lines: Iterator[bytes | str] = codecs.getreader(encoding)(f) if encoding else f
        for lineno, line in enumerate(lines, 1):
            if lineno % JSONL_REPORT_LINES == 0:
                tracked.report()
            if not line.strip():
                continue
            try:
                records.append(json.loads(line))
            except json.JSONDecodeError as exc:
                raise DataIOError(
                    f"{path}: line {lineno} is not valid JSON ({exc.msg}, column {exc.colno})",
                    path=path,
                ) from None
    m.report(1, 1, "files", stage="converting")
    if records and all(isinstance(r, dict) for r in records):
        import pandas as pd

        return pd.DataFrame.from_records(records)
    return records


def _load_npy(path: Path, m: Monitor, trust: bool) -> Any:
    import numpy as np

    from cave_tui.dataio.formats import npy_header

    with open(path, "rb") as f:
        try:
            header = npy_header(f)
        except ValueError as exc:
            raise DataIOError(f"{path}: the .npy header is corrupt ({exc})", path=path) from None
        if header is None:  # a version numpy reads itself
            f.seek(0)
            return np.load(f, allow_pickle=trust)
        shape, fortran, dtype = header
        if dtype.hasobject:
            if not trust:
                raise TrustRequiredError(
                    f"{path} holds Python objects stored as pickles, which run code when "
                    "loaded; load it only if you trust it (confirm, or pass --trust)",
                    path=path,
                )
            f.seek(0)
            return np.load(f, allow_pickle=True)
        count = math.prod(shape)
        if count == 0 or dtype.itemsize == 0:
            return np.empty(shape, dtype=dtype, order="F" if fortran else "C")
        flat = np.empty(count, dtype=dtype)
        view = flat.view(np.uint8).data  # a writable memoryview of the array's bytes
        total = view.nbytes
        done = 0
        while done < total:
            m.report(done, total)
            n = f.readinto(view[done : done + BLOCK])
            if not n:
                raise DataIOError(
                    f"{path}: the .npy file is truncated ({done:,} of {total:,} data bytes)",
                    path=path,
                )
            done += n
    return flat.reshape(shape, order="F" if fortran else "C")


def _load_npz(path: Path, m: Monitor, trust: bool) -> Any:
    import numpy as np

    out = {}
    with np.load(path, allow_pickle=trust) as archive:
        keys = list(archive.files)
        for i, key in enumerate(keys):
            m.report(i, len(keys), "arrays")
            try:
                out[key] = archive[key]
            except ValueError as exc:
                if "allow_pickle" in str(exc):
                    raise TrustRequiredError(
                        f"{path}: array {key!r} holds Python objects stored as pickles, which "
                        "run code when loaded; load it only if you trust it",
                        path=path,
                    ) from None
                raise
    return out


def _load_pickle(path: Path, m: Monitor, trust: bool, *, use_dill: bool = False) -> Any:
    if use_dill:
        import dill

        loader: Callable[[Any], Any] = dill.load
    else:
        loader = pickle.load
    with _open_tracked(path, m) as (f, _):
        try:
            return loader(f)
        except (EOFError, pickle.UnpicklingError) as exc:
            detail = str(exc) or type(exc).__name__
            raise DataIOError(
                f"{path}: the pickle is truncated or corrupt ({detail})", path=path
            ) from None
        except (ModuleNotFoundError, AttributeError, ImportError) as exc:
            raise DataIOError(
                f"{path}: the pickle refers to code that is not available here ({exc})",
                path=path,
            ) from None


def _load_dill(path: Path, m: Monitor, trust: bool) -> Any:
    return _load_pickle(path, m, trust, use_dill=True)


# The package pandas reads each Excel format with (`pip install` name = module name).
EXCEL_ENGINES: dict[str, Literal["openpyxl", "xlrd"]] = {"excel": "openpyxl", "xls": "xlrd"}


def _load_excel(path: Path, m: Monitor, fmt: str, sheet: str | None) -> Any:
    """One sheet as a frame (*sheet*, or the only one), else {sheet name: frame}."""
    engine = EXCEL_ENGINES[fmt]
    if importlib.util.find_spec(engine) is None:
        raise DataIOError(
            f"{path}: reading {path.suffix or 'Excel'} files needs the {engine} package "
            f"(pip install {engine}, or pip install 'cave-tui[excel]')",
            path=path,
        )
    import pandas as pd

    with pd.ExcelFile(path, engine=engine) as book:
        sheets = [str(s) for s in book.sheet_names]
        if sheet is not None:
            if sheet not in sheets:
                raise DataIOError(
                    f"{path}: no sheet named {sheet!r}; its sheets: {', '.join(sheets)}", path=path
                )
            sheets = [sheet]
        out = {}
        for i, name in enumerate(sheets):
            m.report(i, len(sheets), "sheets")
            out[name] = pd.read_excel(book, sheet_name=name)
    return out[sheets[0]] if len(sheets) == 1 else out


# Delimited text formats, by their own separator (a file's may be sniffed or given).
DELIMITED = {"csv": ",", "tsv": "\t"}
# Text formats take the file's encoding (None: UTF-8) instead of the trust flag.
TEXT_LOADERS: dict[str, Callable[[Path, Monitor, str | None], Any]] = {
    "json": _load_json,
    "jsonl": _load_jsonl,
}
LOADERS: dict[str, Callable[[Path, Monitor, bool], Any]] = {
    "parquet": _load_parquet,
    "feather": _load_feather,
    "npy": _load_npy,
    "npz": _load_npz,
    "pickle": _load_pickle,
    "dill": _load_dill,
}


def require_trust(path: Path, fmt: Format, trust: bool) -> None:
    if fmt.runs_code and not trust:
        raise TrustRequiredError(
            f"{path} is a {fmt.label} file: loading it runs code stored in it. Load it only "
            "if you trust where it came from (confirm in the app, or pass --trust)",
            path=path,
        )


def load_file(
    path: str | Path,
    *,
    fmt: str | None = None,
    trust: bool = False,
    cancel: CancelLike = None,
    progress: ProgressCallback | None = None,
    compute_sha256: bool | str = True,
    encoding: str | None = None,
    sep: str | None = None,
    sheet: str | None = None,
    parquet_as_file: bool = False,
) -> Loaded:
    """Load *path* by its format. Raises `DataIOError` (or a subclass) with a clear message.

    With *parquet_as_file* a parquet file comes back as a `ParquetFile` (footer checked) for
    an isolated runtime to build the frame where its cells run.

    A text file (CSV, TSV, JSON, JSON Lines) is read as *encoding* when given, else as
    UTF-8 or, when its bytes are not UTF-8, as the encoding they suggest (`Loaded.encoding`).
    A CSV/TSV file is split on *sep* when given, else on the separator its first lines
    show (`Loaded.delimited`). An Excel workbook gives its *sheet* as a frame when named,
    else its only sheet, else {sheet name: frame}.

    Blocking: run it on a worker thread (see `load_file_async`). Set *cancel* to stop
    it between chunks (`LoadCancelled` is raised); *progress* receives `Progress`.
    The file's sha256 is computed on a second thread while it is parsed; with
    `compute_sha256="background"` it starts after the parse and the load returns
    without waiting for it (`Loaded.sha256_future` resolves when it is done: hashing
    a large file can take longer than parsing it).
    """
    started = time.perf_counter()
    p = Path(path).expanduser()
    named = check_encoding(encoding, str(p)) if encoding else None
    fmt_obj = detect_format(path, fmt, named)
    require_trust(p, fmt_obj, trust)
    if sheet is not None and fmt_obj.name not in EXCEL_ENGINES:
        raise DataIOError(f"{p}: a sheet applies to an Excel workbook, not {fmt_obj.label}")
    layout = None
    if fmt_obj.text:
        sample = read_sample(p)
        encoding = named or encoding_of(sample)
        if fmt_obj.name in DELIMITED:
            text = codecs.getincrementaldecoder(encoding or "utf-8-sig")(errors="replace")
            head = text.decode(sample[: 4 * SNIFF_CHARS])
            layout = sniff_delimited(head, DELIMITED[fmt_obj.name], sep)
    else:
        encoding = None
    monitor = Monitor(cancel, progress, str(p))
    monitor.check()
    background = compute_sha256 == "background"
    # Hashing beside the parser shortens a load that waits for both; in the background
    # it starts once the value is ready, so it does not compete with the parser's threads.
    # A small file is hashed after the parse, here: a thread each would cost more (a dump
    # of 10,000 small variables).
    size = p.stat().st_size
    inline = bool(compute_sha256) and not background and size < HASH_INLINE_BELOW
    hasher = (
        _BackgroundHash(p, Monitor()) if compute_sha256 and not background and not inline else None
    )
    try:
        if parquet_as_file and fmt_obj.name == "parquet":
            value: Any = _read_value(p, fmt_obj, monitor, trust, encoding, _parquet_file)
        else:
            value = _read_value(p, fmt_obj, monitor, trust, encoding, layout=layout, sheet=sheet)
    except BaseException:
        if hasher is not None:
            hasher.stop()
        raise
    if background:
        hasher = _BackgroundHash(p, Monitor())
    sha = hasher.result() if hasher is not None and not background else None
    if inline:
        sha = hashlib.sha256(p.read_bytes()).hexdigest()
    return Loaded(
        value=value,
        path=p,
        format=fmt_obj.name,
        bytes=p.stat().st_size,
        sha256=sha,
        seconds=time.perf_counter() - started,
        sha256_future=hasher.future if hasher is not None else None,
        encoding=encoding,
        encoding_guessed=encoding is not None and named is None,
        delimited=layout,
    )


def _read_value(
    p: Path,
    fmt_obj: Format,
    monitor: Monitor,
    trust: bool,
    encoding: str | None,
    reader: Callable[[Path, Monitor], Any] | None = None,
    layout: Delimited | None = None,
    sheet: str | None = None,
) -> Any:
    """Run the format's loader (or *reader*), turning library exceptions into `DataIOError`s."""
    try:
        if reader is not None:
            return reader(p, monitor)
        if layout is not None:
            return _load_delimited(p, monitor, layout, encoding)
        if fmt_obj.name in TEXT_LOADERS:
            return TEXT_LOADERS[fmt_obj.name](p, monitor, encoding)
        if fmt_obj.name in EXCEL_ENGINES:
            return _load_excel(p, monitor, fmt_obj.name, sheet)
        return LOADERS[fmt_obj.name](p, monitor, trust)
    except DataIOError:
        raise
    except UnicodeDecodeError as exc:
        raise DataIOError(
            f"{p}: not {encoding or 'UTF-8'} text ({exc.reason}); give its encoding as "
            "PATH:encoding=NAME (e.g. cp1252, latin-1)",
            path=p,
        ) from None
    except MemoryError:
        raise DataIOError(f"{p}: not enough memory to load it", path=p) from None
    except OSError as exc:
        from cave_tui.dataio.errors import describe_os_error

        detail = describe_os_error(exc, "read", p) if exc.errno else f"{p}: {exc}"
        raise DataIOError(
            f"{detail} (could not read it as {fmt_obj.label}: the file may be corrupt)", path=p
        ) from None
    except Exception as exc:
        raise DataIOError(
            f"{p}: could not read it as {fmt_obj.label} — the file is corrupt or not really "
            f"{fmt_obj.label} ({type(exc).__name__}: {_first_line(exc)})",
            path=p,
        ) from None


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return text[0][:300] if text else ""


async def load_file_async(path: str | Path, **kwargs: Any) -> Loaded:
    """`load_file` on a worker thread; cancelling the awaiting task stops the load."""
    cancel = kwargs.pop("cancel", None)
    flag = threading.Event()

    def cancelled() -> bool:
        if flag.is_set():
            return True
        if cancel is None:
            return False
        return bool(cancel.is_set() if hasattr(cancel, "is_set") else cancel())

    fut = asyncio.get_running_loop().run_in_executor(
        None, lambda: load_file(path, cancel=cancelled, **kwargs)
    )
    try:
        return await asyncio.shield(fut)
    except asyncio.CancelledError:
        flag.set()
        with contextlib.suppress(BaseException):
            await fut
        raise
