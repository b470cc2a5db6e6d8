"""What loading a file will take in memory, known from its metadata before any of it is read,
and the check that refuses it when the runtime's memory limit cannot hold it.

`estimate_file` reads only what says the size: a parquet footer (rows x column widths), a
.npy header (shape x itemsize), Arrow IPC message headers, zip and gzip directories; text
and pickles are sized from their (uncompressed) byte count by a rough factor. `check_room`
compares what the runtime already holds plus that estimate with its limit and raises
`NotEnoughMemoryError` ("not enough memory in the kernel: needs N, limit M") before any
big allocation, in the host or in the kernel.
"""

from __future__ import annotations

import math
import struct
import zipfile
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cave_tui.dataio.errors import NotEnoughMemoryError
from cave_tui.runtime.memory import MemoryUse, format_bytes, not_enough_memory_text

OBJECT_BYTES = 64  # a value pandas holds as a Python object (a string), about
SENT_FACTOR = 2  # an array sent to a kernel: the bytes as received, and the array built
FRAME_FACTOR = 2  # an Arrow table and the frame pandas builds from it, both alive at the peak
TEXT_FACTOR = 2  # CSV/TSV: the frame plus the parser's buffers, per byte of text (rough)
JSON_FACTOR = 6  # Python objects per byte of JSON text (rough)
PICKLE_FACTOR = 2  # the objects a pickle builds, per byte of pickle (rough)
EXCEL_FACTOR = 20  # openpyxl's cells per byte of a (zipped) workbook (rough)


@dataclass(frozen=True)
class DataSize:
    """About the bytes building a value takes at its peak, and where that figure came from."""

    bytes: int
    how: str  # "from the parquet footer", "from the .npy header", …
    libraries: bool = True  # built with pyarrow/pandas (not plain JSON or a pickle)


def estimate_file(path: Path, fmt: str) -> DataSize | None:
    """What loading *path* as *fmt* takes at its peak (None: unknown, or the metadata is
    unreadable; the load itself then reports what is wrong with the file)."""
    sizer = _SIZERS.get(fmt)
    if sizer is None:
        return None
    try:
        return sizer(path)
    except (OSError, ValueError, EOFError, struct.error, zipfile.BadZipFile):
        return None
    except Exception as exc:  # pyarrow's errors: a corrupt footer the loader will name
        if type(exc).__module__.startswith("pyarrow"):
            return None
        raise


def place_of(runtime: object) -> str:
    """Where the runtime builds values: the kernel, or this (the app's) process."""
    return "the kernel" if getattr(runtime, "isolated", False) else "the in-process runtime"


def check_room(runtime: object, size: DataSize | None, what: str) -> None:
    """Raise `NotEnoughMemoryError` when *runtime*'s limit cannot hold what it holds now plus
    *size* (nothing happens without a limit or an estimate)."""
    if size is None:
        return
    memory_for_data = getattr(runtime, "memory_for_data", None)
    use = memory_for_data(size.libraries) if callable(memory_for_data) else None
    if not isinstance(use, MemoryUse) or not use.limit:
        return
    needs = use.used + size.bytes
    if needs > use.limit:
        raise not_enough_memory(place_of(runtime), what, needs, use.limit, size, use.used)


def not_enough_memory(
    place: str, what: str, needs: int, limit: int, size: DataSize | None, used: int | None
) -> NotEnoughMemoryError:
    """The refusal: `not enough memory in the kernel: needs N, limit M`, then why and what to do."""
    parts = []
    if size is not None:
        parts.append(f"{what} takes about {format_bytes(size.bytes)} once loaded ({size.how})")
    else:
        parts.append(f"{what} did not fit")
    if used:
        parts.append(f"{place} takes {format_bytes(used)} before it (its libraries included)")
    return NotEnoughMemoryError(
        not_enough_memory_text(place, needs, limit)
        + "; "
        + " and ".join(parts)
        + ". Nothing was loaded. Raise "
        "--memory-limit, free memory there (del big variables), or load a part of the data",
        needs=needs,
        limit=limit,
    )


# -- the sizers -------------------------------------------------------------------------------
def _parquet(path: Path) -> DataSize:
    """Rows x width for fixed-width columns (a file of zeros compresses to nothing, but not
    once read), the uncompressed pages plus an object per row for the others."""
    import pyarrow.parquet as pq

    with open(path, "rb") as f:
        meta = pq.read_metadata(f)
    schema = meta.schema.to_arrow_schema()
    rows = meta.num_rows
    widths = [_fixed_width(field.type) for field in schema]
    variable: set[str] = {
        field.name for field, width in zip(schema, widths, strict=True) if width is None
    }
    total = rows * sum(w for w in widths if w is not None)
    for i in range(meta.num_row_groups):
        group = meta.row_group(i)
        for j in range(group.num_columns):
            column = group.column(j)
            if column.path_in_schema.split(".")[0] in variable:
                total += column.total_uncompressed_size
    total += rows * OBJECT_BYTES * len(variable)
    return DataSize(total * FRAME_FACTOR, "from the parquet footer")


def _fixed_width(kind: Any) -> int | None:
    """Bytes per value of a fixed-width Arrow type (None for strings, lists, …)."""
    import pyarrow as pa

    if pa.types.is_dictionary(kind):
        return None
    try:
        return max(int(kind.bit_width) // 8, 1)
    except ValueError:
        return None


def _npy(path: Path) -> DataSize:
    from cave_tui.dataio.formats import npy_header

    with open(path, "rb") as f:
        header = npy_header(f)
    if header is None:
        raise ValueError("an unknown .npy version")
    shape, _, dtype = header
    size = math.prod(shape) * dtype.itemsize
    if dtype.hasobject:
        size = max(size, path.stat().st_size) * PICKLE_FACTOR
    return DataSize(size * SENT_FACTOR, "from the .npy header")


def _npz(path: Path) -> DataSize:
    with zipfile.ZipFile(path) as archive:
        size = sum(info.file_size for info in archive.infolist())
    return DataSize(size * SENT_FACTOR, "from the archive's directory")


def _arrow(path: Path) -> DataSize:
    """The IPC messages' bodies as they decompress (their headers say), then the frame."""
    import pyarrow as pa

    from cave_tui.runtime.kernel.arrow_sizes import MalformedIPC, decoded_size

    with pa.memory_map(str(path)) as mapped:  # only the pages of the headers are read
        whole = mapped.read_buffer()
        head = whole.slice(0, 8).to_pybytes()
        if head.startswith(b"FEA1"):  # Feather v1: stored uncompressed
            return DataSize(whole.size * FRAME_FACTOR, "from the file size")
        body = whole.slice(8) if head.startswith(b"ARROW1") else whole
        try:
            size = decoded_size(body)
        except MalformedIPC as exc:
            raise ValueError(str(exc)) from None
    return DataSize(size * FRAME_FACTOR, "from the Arrow message headers")


def _text_bytes(path: Path) -> tuple[int, str]:
    """The text's size: the file's, or a gzip file's uncompressed size from its trailer."""
    size = path.stat().st_size
    if not path.name.lower().endswith(".gz") or size < 18:
        return size, "from the file size"
    with open(path, "rb") as f:
        f.seek(-4, 2)
        (isize,) = struct.unpack("<I", f.read(4))
    if isize >= size:  # the trailer keeps the size modulo 4 GiB
        return isize, "from the gzip trailer"
    return size * 8, "from the compressed size"


def _delimited(path: Path) -> DataSize:
    size, how = _text_bytes(path)
    return DataSize(size * TEXT_FACTOR, how)


def _json(path: Path) -> DataSize:
    size, how = _text_bytes(path)
    return DataSize(size * JSON_FACTOR, how, libraries=False)


def _pickle(path: Path) -> DataSize:
    return DataSize(path.stat().st_size * PICKLE_FACTOR, "from the file size", libraries=False)


def _excel(path: Path) -> DataSize:
    return DataSize(path.stat().st_size * EXCEL_FACTOR, "from the file size")


_SIZERS = {
    "parquet": _parquet,
    "npy": _npy,
    "npz": _npz,
    "feather": _arrow,
    "csv": _delimited,
    "tsv": _delimited,
    "json": _json,
    "jsonl": _json,
    "pickle": _pickle,
    "dill": _pickle,
    "excel": _excel,
    "xls": _excel,
}


def total(sizes: Iterable[DataSize | None], how: str) -> DataSize | None:
    """Several files bound together (a dump's entries); None when none could be sized."""
    known = [s for s in sizes if s is not None]
    if not known:
        return None
    return DataSize(sum(s.bytes for s in known), how, any(s.libraries for s in known))
