"""Saving Python objects to files in the format that fits their type.

Frames (and Series, Arrow tables) go to Parquet, arrays to .npy, plain JSON data
to JSON, anything else to a pickle (or dill, which also handles functions and
classes defined in the session). Every write goes to a temporary sibling, is
fsynced and renamed into place (`atomic.atomic_path`), so a crash or a full disk
never leaves a half-written file at the target path; a save first removes the temporary
files that killed saves left in its folder.
"""

from __future__ import annotations

import json
import os
import pickle
import types
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cave_tui.dataio.atomic import atomic_path, cleanup_temp_files
from cave_tui.dataio.errors import DataIOError, FileExistsConflict, describe_os_error
from cave_tui.dataio.formats import FORMATS, format_for_extension
from cave_tui.dataio.progress import CancelLike, Monitor, ProgressCallback

if TYPE_CHECKING:
    from cave_tui.runtime.items import Pickled

EXTENSIONS = {
    "parquet": ".parquet",
    "feather": ".feather",
    "csv": ".csv",
    "tsv": ".tsv",
    "json": ".json",
    "jsonl": ".jsonl",
    "npy": ".npy",
    "npz": ".npz",
    "pickle": ".pkl",
    "dill": ".dill",
    "excel": ".xlsx",
}
SERIES_COLUMN = "__cave_series__"


class Unsuitable(Exception):
    """This object cannot be written in this format (the reason says why)."""


@dataclass
class Saved:
    """Where an object was written, and how."""

    path: Path
    format: str
    bytes: int
    sha256: str | None = None
    restore: dict[str, Any] = field(default_factory=dict)  # e.g. {"as": "series", "name": "x"}
    note: str = ""  # e.g. why the preferred format could not be used


def _is_module(obj: Any, prefix: str, name: str) -> bool:
    cls = type(obj)
    return (cls.__module__ or "").startswith(prefix) and cls.__name__ == name


def is_frame(obj: Any) -> bool:
    return _is_module(obj, "pandas", "DataFrame")


def is_series(obj: Any) -> bool:
    return _is_module(obj, "pandas", "Series")


def is_array(obj: Any) -> bool:
    return _is_module(obj, "numpy", "ndarray")


def is_arrow_table(obj: Any) -> bool:
    return _is_module(obj, "pyarrow", "Table")


_JSON_TYPES = (dict, list, str, int, float, bool, type(None))


def is_json_data(obj: Any, _depth: int = 0) -> bool:
    """True for plain dict/list/str/number/bool/None trees that JSON keeps exactly."""
    if _depth > 200:
        return False
    kind = type(obj)
    if kind not in _JSON_TYPES:
        return False
    if kind is float:
        return obj == obj and obj not in (float("inf"), float("-inf"))
    if kind is list:
        return all(is_json_data(x, _depth + 1) for x in obj)
    if kind is dict:
        return all(type(k) is str and is_json_data(v, _depth + 1) for k, v in obj.items())
    return True


def preferred_format(obj: Any) -> str:
    """The format that fits *obj*'s type: parquet, npy, json or pickle."""
    if is_frame(obj) or is_series(obj) or is_arrow_table(obj):
        return "parquet"
    if is_array(obj) and not obj.dtype.hasobject:
        return "npy"
    if is_json_data(obj):
        return "json"
    return "pickle"


def kernel_pickle(obj: Any) -> Pickled | None:
    """The bytes of a `KernelPickle` (a value the kernel keeps, pickled where it lives), else
    None. They are written as they are, never unpickled in this process."""
    from cave_tui.runtime.items import Pickled

    made = getattr(obj, "pickled", None)
    return made if isinstance(made, Pickled) else None


KERNEL_PICKLE_NOTE = (
    "written as the kernel's own pickle: loading it back runs code, so only where you trust it"
)


def candidate_formats(obj: Any) -> list[str]:
    """Formats to try in order: the preferred one, then the generic fallbacks (a kernel's
    pickle: its own format only)."""
    made = kernel_pickle(obj)
    if made is not None:
        return [made.format]
    first = preferred_format(obj)
    rest = [f for f in ("pickle", "dill") if f != first]
    return [first, *rest]


# -- writers: (obj, temporary path) -> restore info; raise Unsuitable when it does not fit --
def _arrow_unsuitable(exc: Exception) -> Unsuitable:
    return Unsuitable(f"{type(exc).__name__}: {str(exc).splitlines()[0] if str(exc) else ''}")


def _frame_for_arrow(obj: Any) -> tuple[Any, dict[str, Any]]:
    if is_series(obj):
        name = obj.name
        if name is not None and not isinstance(name, str):
            raise Unsuitable("the Series name is not a string")
        return obj.to_frame(name if name is not None else SERIES_COLUMN), {
            "as": "series",
            "name": name,
        }
    if is_frame(obj):
        if obj.columns.nlevels > 1:
            raise Unsuitable(
                f"the frame has MultiIndex columns (levels {_names(obj.columns.names)}); "
                "flatten them first, or save as .pkl"
            )
        if not all(isinstance(c, str) for c in obj.columns):
            raise Unsuitable("the frame has non-string column names")
        return obj, {}
    if is_arrow_table(obj):
        return obj, {"as": "arrow"}
    raise Unsuitable(f"a {type(obj).__name__} is not a table")


WRITE_CHUNK_ROWS = 250_000  # rows per row group when a write reports its progress


def _write_parquet_chunks(frame: Any, path: Path, checksums: bool, monitor: Monitor) -> None:
    """Write *frame* a row group at a time, reporting bytes and rows to *monitor* and
    stopping (`LoadCancelled`) between groups when it was cancelled."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    table = frame if is_arrow_table(frame) else pa.Table.from_pandas(frame)
    total, rows, done = table.nbytes, table.num_rows, 0
    with pq.ParquetWriter(path, table.schema, write_page_checksum=checksums) as writer:
        for start in range(0, max(rows, 1), WRITE_CHUNK_ROWS):
            monitor.report(done, total, stage="writing", rows=start)
            part = table.slice(start, WRITE_CHUNK_ROWS)
            writer.write_table(part)
            done += part.nbytes
    monitor.report(total, total, stage="writing", rows=rows)


def _write_parquet(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    import pyarrow as pa
    import pyarrow.parquet as pq

    frame, restore = _frame_for_arrow(obj)
    checksums = bool(options.get("checksums", True))  # let readers detect corrupted pages
    monitor = options.get("monitor")  # a `Monitor`: a long frame by row groups, with progress
    try:
        if isinstance(monitor, Monitor) and len(frame) > WRITE_CHUNK_ROWS:
            _write_parquet_chunks(frame, path, checksums, monitor)
        elif is_arrow_table(frame):
            pq.write_table(frame, path, write_page_checksum=checksums)
        else:
            frame.to_parquet(path, write_page_checksum=checksums)
    except OSError:
        raise
    except (pa.ArrowException, ValueError, TypeError, NotImplementedError) as exc:
        raise _arrow_unsuitable(exc) from None
    return restore


def _write_feather(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    import pyarrow as pa
    from pyarrow import feather

    frame, restore = _frame_for_arrow(obj)
    try:
        feather.write_feather(frame, path)
    except OSError:
        raise
    except (pa.ArrowException, ValueError, TypeError, NotImplementedError) as exc:
        raise _arrow_unsuitable(exc) from None
    return restore


def _is_default_index(index: Any) -> bool:
    """True for the 0, 1, 2, ... row numbers pandas gives a frame that has no index of its own."""
    import pandas as pd

    return (
        isinstance(index, pd.RangeIndex)
        and index.start == 0
        and index.step == 1
        and index.name is None
    )


def _flat_table(obj: Any, label: str) -> tuple[Any, dict[str, Any]]:
    """*obj* (a frame, Series or Arrow table) as the flat table a text format holds, and how
    to restore it.

    A meaningful index (a group-by's keys, a named or labelled index, each level of a
    MultiIndex) becomes the leading columns (`restore["index"]` names them); the default
    0..n-1 row numbers are left out. What a header row cannot hold is refused (MultiIndex
    columns, duplicate names, an index name that is also a column's) or stated
    (`restore["lost"]`: column labels that are not strings, the column axis's name).
    """
    import pandas as pd

    restore: dict[str, Any] = {}
    if is_series(obj):
        restore = {"as": "series", "name": obj.name}
        frame = obj.to_frame("value" if obj.name is None else obj.name)
    elif is_frame(obj):
        frame = obj
    elif is_arrow_table(obj):
        frame = obj.to_pandas()  # with the pandas index its metadata records, if any
    else:
        raise Unsuitable(f"a {type(obj).__name__} is not a table")
    columns = frame.columns
    if isinstance(columns, pd.MultiIndex):
        raise Unsuitable(
            f"the frame has MultiIndex columns, and {label} holds one name per column; "
            "flatten them first (df.columns = ['_'.join(map(str, c)) for c in df.columns]) "
            "or save as .pkl"
        )
    lost: list[str] = []
    if not all(isinstance(c, str) for c in columns):
        lost.append("column labels that are not strings are written as text")
    if columns.name is not None:
        lost.append(f"the column axis name {columns.name!r} is not kept")
    if not _is_default_index(frame.index):
        levels = frame.index.nlevels
        try:
            frame = frame.reset_index()
        except ValueError as exc:  # an index name that is also a column name
            raise Unsuitable(
                f"the index ({_names(frame.index.names)}) cannot be written as columns: {exc}; "
                "rename the index or the column first"
            ) from None
        restore["index"] = [str(c) for c in frame.columns[:levels]]
    if len(frame.columns) == 0:
        raise Unsuitable(f"the table has no columns: {label} would hold nothing to read back")
    dupes = sorted({str(c) for c in frame.columns[frame.columns.duplicated()]})
    if dupes:
        raise Unsuitable(
            f"the column name(s) {', '.join(dupes)} occur more than once; {label} cannot "
            "tell them apart when read back; rename them first"
        )
    if lost:
        restore["lost"] = lost
    return frame, restore


def _names(names: Any) -> str:
    return ", ".join("(unnamed)" if n is None else str(n) for n in names)


def _write_delimited(obj: Any, path: Path, sep: str, label: str) -> dict[str, Any]:
    frame, restore = _flat_table(obj, label)
    frame.to_csv(path, sep=sep, index=False)
    return restore


def json_bytes(obj: Any) -> bytes:
    """*obj* (plain JSON data) as the bytes of its `.json` file; Unsuitable if it is not."""
    if not is_json_data(obj):
        raise Unsuitable(f"a {type(obj).__name__} is not plain JSON data")
    return json.dumps(obj, ensure_ascii=False, allow_nan=False).encode("utf-8")


def _write_json(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    if is_frame(obj) or is_series(obj) or is_arrow_table(obj):
        frame, restore = _flat_table(obj, "JSON")
        frame.to_json(path, orient="records", date_format="iso")
        return {**restore, "as": "records"}
    data = json_bytes(obj)
    with open(path, "wb") as f:
        f.write(data)
    return {}


def _write_jsonl(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    if is_frame(obj) or is_series(obj) or is_arrow_table(obj):
        frame, restore = _flat_table(obj, "JSON Lines")
        frame.to_json(path, orient="records", lines=True, date_format="iso")
        return restore
    if isinstance(obj, list) and is_json_data(obj):
        with open(path, "w", encoding="utf-8") as f:
            for item in obj:
                f.write(json.dumps(item, ensure_ascii=False, allow_nan=False) + "\n")
        return {}
    raise Unsuitable(f"a {type(obj).__name__} is not a list of records")


def _write_npy(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    if not is_array(obj):
        raise Unsuitable(f"a {type(obj).__name__} is not a NumPy array")
    if obj.dtype.hasobject:
        raise Unsuitable("the array holds Python objects (it would need a pickle)")
    with open(path, "wb", buffering=0) as f:  # unbuffered: the data is not copied on its way
        _save_npy(_Writer(f), obj)
    return {}


NPY_BLOCK = 16 * 1024 * 1024


def _save_npy(f: _Writer, array: Any) -> None:
    """What `np.save` writes, through *f*'s `write`: a full disk then raises ENOSPC (numpy's
    own `tofile` says only "N requested and M written", with no errno)."""
    import numpy as np
    from numpy.lib import format as npformat

    header = npformat.header_data_from_array_1_0(array)
    if not (array.flags.c_contiguous or array.flags.f_contiguous):
        np.save(f, array, allow_pickle=False)  # numpy writes it in copied chunks
        return
    try:
        npformat.write_array_header_1_0(f, header)  # ValueError before writing when too big
    except ValueError:  # a header for format 2.0 or 3.0
        np.save(f, array, allow_pickle=False)
        return
    if not (array.size and array.itemsize):
        return  # the header is all there is
    ordered = array.T if header["fortran_order"] else array
    data = ordered.reshape(-1).view(np.uint8)  # C order: a view, no copy
    for start in range(0, data.size, NPY_BLOCK):
        f.write(data[start : start + NPY_BLOCK])


class _Writer:
    """An unbuffered file seen only through a `write` that writes all it is given (numpy
    then writes through it, not with `tofile`)."""

    def __init__(self, f: Any) -> None:
        self.f = f

    def write(self, data: Any) -> int:
        view = memoryview(data).cast("B")
        size = view.nbytes
        while view:
            view = view[self.f.write(view) :]
        return size


def _write_npz(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    import numpy as np

    if is_array(obj):
        obj = {"arr_0": obj}
    if not (isinstance(obj, dict) and all(is_array(v) for v in obj.values())):
        raise Unsuitable("only arrays or a dict of arrays go into .npz")
    with open(path, "wb") as f:
        np.savez(f, **{str(k): v for k, v in obj.items()})
    return {}


class _SessionCode(pickle.PicklingError):
    """The object refers to a function or class defined in the session (`__main__`)."""


class _StrictPickler(pickle.Pickler):
    """A pickler that refuses session-defined functions and classes.

    Plain pickle stores those by reference to `__main__`, which only resolves in the
    very namespace that made them; dill stores them by value instead.
    """

    def reducer_override(self, obj: Any) -> Any:
        if (
            isinstance(obj, type | types.FunctionType)
            and getattr(obj, "__module__", "")
            in (
                "__main__",
                "builtins",
            )
            and not _is_importable(obj)
        ):
            raise _SessionCode(f"{getattr(obj, '__qualname__', obj)!s} is defined in the session")
        return NotImplemented


def _is_importable(obj: Any) -> bool:
    import sys

    module = sys.modules.get(getattr(obj, "__module__", "") or "")
    found: Any = module
    for part in getattr(obj, "__qualname__", "").split("."):
        found = getattr(found, part, None)
    return found is obj and getattr(obj, "__module__", "") != "__main__"


def _write_pickle(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    try:
        with open(path, "wb") as f:
            _StrictPickler(f, protocol=pickle.HIGHEST_PROTOCOL).dump(obj)
    except OSError:
        raise
    except Exception as exc:  # PicklingError, TypeError, AttributeError, RecursionError…
        raise Unsuitable(f"pickle: {type(exc).__name__}: {str(exc)[:200]}") from None
    return {}


def _write_dill(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    import dill

    try:
        with open(path, "wb") as f:
            dill.dump(obj, f, protocol=pickle.HIGHEST_PROTOCOL, recurse=True)
    except OSError:
        raise
    except Exception as exc:
        raise Unsuitable(f"dill: {type(exc).__name__}: {str(exc)[:200]}") from None
    return {}


def _write_excel(obj: Any, path: Path, **options: Any) -> dict[str, Any]:
    """A frame or Series as one sheet, flat as a text format writes it (`_flat_table`: the
    index as leading columns), or a dict of them as one sheet each (openpyxl)."""
    import importlib.util

    if importlib.util.find_spec("openpyxl") is None:
        raise Unsuitable("writing .xlsx needs the openpyxl package (pip install openpyxl)")
    one = not isinstance(obj, dict)
    items = [("Sheet1", obj)] if one else [(str(k), v) for k, v in obj.items()]
    if not items or not all(is_frame(v) or is_series(v) for _, v in items):
        raise Unsuitable("a workbook holds a DataFrame or Series, or a dict of them (one a sheet)")
    flat = [(sheet, *_flat_table(value, "a sheet")) for sheet, value in items]
    import pandas as pd

    try:
        with pd.ExcelWriter(path, engine="openpyxl") as book:
            for sheet, frame, _ in flat:
                frame.to_excel(book, sheet_name=sheet, index=False)
    except OSError:
        raise
    except Exception as exc:  # a sheet name Excel refuses, a timezone-aware column…
        raise Unsuitable(f"{type(exc).__name__}: {str(exc)[:200]}") from None
    return flat[0][2] if one else {}


WRITERS: dict[str, Callable[..., dict[str, Any]]] = {
    "parquet": _write_parquet,
    "feather": _write_feather,
    "csv": lambda obj, path, **options: _write_delimited(obj, path, ",", "CSV"),
    "tsv": lambda obj, path, **options: _write_delimited(obj, path, "\t", "TSV"),
    "json": _write_json,
    "jsonl": _write_jsonl,
    "npy": _write_npy,
    "npz": _write_npz,
    "pickle": _write_pickle,
    "dill": _write_dill,
    "excel": _write_excel,
}


def write_in_format(obj: Any, path: Path, fmt: str, **options: Any) -> dict[str, Any]:
    """Write *obj* to *path* (not atomically: callers pass a temporary path).

    Options: `checksums=False` leaves out Parquet page checksums (dumps, whose manifest
    holds each file's sha256, do not need them).
    """
    made = kernel_pickle(obj)
    if made is None:
        return WRITERS[fmt](obj, path, **options)
    if fmt not in ("pickle", "dill"):
        raise Unsuitable(
            f"the kernel keeps this {obj.type_name} to itself: only its pickle can be written "
            "(.pkl or .dill)"
        )
    path.write_bytes(made.data)
    return {}


def save_object(
    obj: Any,
    path: str | Path,
    *,
    fmt: str | None = None,
    overwrite: bool = False,
    sync: bool = True,
    compute_sha256: bool = True,
    cancel: CancelLike = None,
    progress: ProgressCallback | None = None,
) -> Saved:
    """Save *obj* to *path* atomically, in the format that fits it.

    With *progress* a frame written as Parquet reports its bytes and rows, row group by
    row group, and stops (`LoadCancelled`, nothing written) when *cancel* is set.

    *path* may be a file name with or without extension, or an existing folder (then
    `obj` needs a `name`: use `save_variable`). A known extension picks the format;
    with none, the preferred format for the type is used and its extension added.
    Raises `FileExistsConflict` if the target exists and *overwrite* is False.
    """
    target = Path(path).expanduser()
    pinned = fmt or _format_from_path(target)
    candidates = [pinned] if pinned else candidate_formats(obj)
    notes: list[str] = []
    if target.is_dir():
        raise DataIOError(f"{target} is a directory; give a file name inside it", path=target)
    if not target.parent.is_dir():
        raise DataIOError(f"cannot write {target}: the folder {target.parent} does not exist")
    cleanup_temp_files(target.parent)  # what killed saves left here (never a live one's)
    for candidate in candidates:
        final = target if pinned else _with_extension(target, candidate)
        if final.exists() and not overwrite:
            raise FileExistsConflict(
                f"{final} already exists ({final.stat().st_size:,} bytes); not overwritten",
                path=final,
            )
        try:
            with atomic_path(final, sync=sync) as tmp:
                if progress is not None or cancel is not None:
                    monitor = Monitor(cancel, progress, str(final), action="writing")
                    restore = write_in_format(obj, tmp, candidate, monitor=monitor)
                else:
                    restore = write_in_format(obj, tmp, candidate)
        except Unsuitable as exc:
            if pinned:
                what = getattr(obj, "type_name", "") if kernel_pickle(obj) else ""
                raise DataIOError(
                    f"cannot save a {what or type(obj).__name__} as {FORMATS[candidate].label} "
                    f"({final.name}): {exc}; use another extension, or none to let cave choose",
                    path=final,
                ) from None
            notes.append(f"not {candidate}: {exc}")
            continue
        except OSError as exc:
            raise DataIOError(describe_os_error(exc, "write", final), path=final) from None
        size = final.stat().st_size
        sha = None
        if compute_sha256:
            from cave_tui.dataio.load import file_sha256

            sha = file_sha256(final)
        made = kernel_pickle(obj)
        if made is not None:
            candidate = made.format  # dill bytes stay dill, whatever the extension
            notes.append(KERNEL_PICKLE_NOTE)
        return Saved(final, candidate, size, sha, restore, "; ".join([*notes, *_stated(restore)]))
    raise DataIOError(
        f"cannot save {type(obj).__name__} to {target}: " + "; ".join(notes), path=target
    )


def save_file_bytes(data: bytes, path: str | Path, *, fmt: str, overwrite: bool = False) -> Saved:
    """Write *data* (a file already made, e.g. a figure drawn as PNG) to *path* atomically,
    as it is. Raises `FileExistsConflict` if the target exists and *overwrite* is False."""
    import hashlib

    final = Path(path).expanduser()
    if final.is_dir():
        raise DataIOError(f"{final} is a directory; give a file name inside it", path=final)
    if not final.parent.is_dir():
        raise DataIOError(f"cannot write {final}: the folder {final.parent} does not exist")
    if final.exists() and not overwrite:
        raise FileExistsConflict(
            f"{final} already exists ({final.stat().st_size:,} bytes); not overwritten",
            path=final,
        )
    try:
        with atomic_path(final) as tmp:
            tmp.write_bytes(data)
    except OSError as exc:
        raise DataIOError(describe_os_error(exc, "write", final), path=final) from None
    return Saved(final, fmt, len(data), hashlib.sha256(data).hexdigest())


def _stated(restore: dict[str, Any]) -> list[str]:
    """What a text format changed of the object, in words (from the writer's restore info)."""
    said = []
    if restore.get("index"):
        columns = ", ".join(restore["index"])
        said.append(f"the index is written as the column(s) {columns}")
    return [*said, *restore.get("lost", [])]


def _format_from_path(path: Path) -> str | None:
    if path.name.lower().endswith(".gz"):
        raise DataIOError(
            f"cannot save to {path.name}: compressed output is not supported; drop the .gz",
            path=path,
        )
    fmt = format_for_extension(path)
    if fmt is None:
        if path.suffix and path.suffix.lower() not in (".", ""):
            known = ", ".join(sorted(EXTENSIONS.values()))
            raise DataIOError(
                f"cannot save to {path.name}: unknown extension {path.suffix!r} "
                f"(known: {known}; or give no extension to let cave choose)",
                path=path,
            )
        return None
    if fmt.name not in WRITERS:
        raise DataIOError(f"saving as {fmt.label} is not supported; use .parquet or .csv")
    return fmt.name


def _with_extension(path: Path, fmt: str) -> Path:
    ext = EXTENSIONS[fmt]
    return path if path.name.lower().endswith(ext) else path.with_name(path.name + ext)


def target_for(name: str, dest: str | Path | None, default_dir: str | Path) -> Path:
    """Where `/retrieve NAME [PATH]` writes: PATH, PATH/NAME if PATH is a folder, or the default."""
    if dest is None:
        return Path(default_dir) / name
    path = Path(dest).expanduser()
    if path.is_dir() or str(dest).endswith(("/", os.sep)):
        return path / name
    return path
