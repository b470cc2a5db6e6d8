"""File formats: which extension means what, and what the first bytes must look like.

The format comes from the extension and is checked against the file's magic bytes,
so a CSV renamed `.parquet` or a truncated download is reported as such instead of
failing deep inside a parser (or, for pickles, running code from a file that is not
what its name says).
"""

from __future__ import annotations

import os
import zipfile
from dataclasses import dataclass
from pathlib import Path
from typing import IO, Any

from cave_tui.dataio.encoding import bom_encoding, decodes_as, looks_like_text
from cave_tui.dataio.errors import DataIOError

HEAD_BYTES = 4096


@dataclass(frozen=True)
class Format:
    name: str  # "parquet"
    label: str  # "Parquet"
    extensions: tuple[str, ...]
    magic: tuple[str, ...]  # sniffed kinds this format accepts (see `sniff`)
    runs_code: bool = False  # loading may execute code from the file
    text: bool = False


FORMATS: dict[str, Format] = {
    f.name: f
    for f in [
        Format("parquet", "Parquet", (".parquet", ".pq"), ("parquet",)),
        Format(
            "feather",
            "Feather/Arrow IPC",
            (".feather", ".arrow", ".ipc", ".arrows"),
            ("arrow", "feather1", "arrow_stream"),
        ),
        Format("csv", "CSV", (".csv", ".csv.gz"), ("text", "gzip"), text=True),
        Format("tsv", "TSV", (".tsv", ".tab", ".tsv.gz"), ("text", "gzip"), text=True),
        Format("json", "JSON", (".json", ".json.gz"), ("text", "gzip"), text=True),
        Format(
            "jsonl", "JSON Lines", (".jsonl", ".ndjson", ".jsonl.gz"), ("text", "gzip"), text=True
        ),
        Format("npy", "NumPy array", (".npy",), ("npy",)),
        Format("npz", "NumPy archive", (".npz",), ("zip",)),
        Format("pickle", "pickle", (".pkl", ".pickle"), ("pickle",), runs_code=True),
        Format("dill", "dill", (".dill",), ("pickle",), runs_code=True),
        Format("excel", "Excel", (".xlsx", ".xlsm"), ("zip",)),
        Format("xls", "Excel 97-2003", (".xls",), ("ole2",)),
    ]
}

KIND_LABELS = {
    "parquet": "Parquet",
    "arrow": "Arrow IPC/Feather",
    "feather1": "Feather v1",
    "arrow_stream": "Arrow IPC stream",
    "npy": "NumPy .npy",
    "zip": "a zip archive",
    "ole2": "an old Office (.xls/.doc) file",
    "pickle": "a pickle",
    "gzip": "gzip-compressed data",
    "text": "text",
    "binary": "binary data of an unknown kind",
}


def extension_of(path: Path) -> str:
    """The longest known extension of *path* (".csv.gz" before ".gz"), lower case."""
    name = path.name.lower()
    best = ""
    for fmt in FORMATS.values():
        for ext in fmt.extensions:
            if name.endswith(ext) and len(ext) > len(best) and len(name) > len(ext):
                best = ext
    return best or path.suffix.lower()


def format_for_extension(path: Path) -> Format | None:
    ext = extension_of(path)
    for fmt in FORMATS.values():
        if ext in fmt.extensions:
            return fmt
    return None


def stem_of(path: Path) -> str:
    """The file name without its (possibly double) format extension."""
    ext = extension_of(path)
    name = path.name
    return name[: -len(ext)] if ext and name.lower().endswith(ext) else path.stem


def sniff(head: bytes) -> str:
    """What the first bytes say the file is (one of KIND_LABELS' keys)."""
    if head.startswith(b"PAR1"):
        return "parquet"
    if head.startswith(b"ARROW1"):
        return "arrow"
    if head.startswith(b"FEA1"):
        return "feather1"
    if head.startswith(b"\xff\xff\xff\xff"):
        return "arrow_stream"
    if head.startswith(b"\x93NUMPY"):
        return "npy"
    if head.startswith((b"PK\x03\x04", b"PK\x05\x06")):
        return "zip"
    if head.startswith(b"\xd0\xcf\x11\xe0"):
        return "ole2"
    if head.startswith(b"\x1f\x8b"):
        return "gzip"
    if len(head) >= 2 and head[0] == 0x80 and 2 <= head[1] <= 5:
        return "pickle"
    if bom_encoding(head) is not None:  # UTF-16/32 text (Excel's "Unicode text")
        return "text"
    if b"\x00" not in head:
        try:
            head.decode("utf-8")
            return "text"
        except UnicodeDecodeError as exc:
            if exc.start >= len(head) - 4:  # a multibyte character cut by the sample
                return "text"
            if head[:1] in (b"(", b"]", b"}"):  # protocol 0/1 pickles
                return "pickle"
            if looks_like_text(head):  # Latin-1, cp1252, …: read with that encoding
                return "text"
    if head[:1] in (b"]", b"}", b"("):
        return "pickle"
    return "binary"


def _zip_kind(path: Path) -> str:
    """'npz' or 'excel' for a zip archive, from its member names."""
    try:
        with zipfile.ZipFile(path) as archive:
            names = archive.namelist()
    except (zipfile.BadZipFile, OSError):
        return "bad"
    if "[Content_Types].xml" in names:
        return "excel"
    if all(n.endswith(".npy") for n in names):
        return "npz"
    return "zip"


def check_readable_file(path: str | Path) -> Path:
    """*path* as a Path if it is an existing, readable, regular file; else a DataIOError."""
    p = Path(path).expanduser()
    if not p.exists():
        hint = ""
        if p.parent.is_dir():
            import difflib

            close = difflib.get_close_matches(p.name, [c.name for c in p.parent.iterdir()], n=2)
            hint = f"; did you mean {' or '.join(close)}?" if close else ""
        raise DataIOError(f"{p}: no such file{hint}", path=p)
    if p.is_dir():
        raise DataIOError(
            f"{p} is a directory, not a file (to restore a dump folder, use --load)", path=p
        )
    if not p.is_file():
        raise DataIOError(f"{p} is not a regular file", path=p)
    if not os.access(p, os.R_OK):
        raise DataIOError(f"{p}: permission denied (cannot read the file)", path=p)
    return p


def detect_format(
    path: str | Path, declared: str | None = None, encoding: str | None = None
) -> Format:
    """The format of *path*: from its extension (or *declared*), checked against its bytes.

    A text format whose *encoding* is named is checked by decoding its first bytes in it
    (UTF-16 without a byte-order mark has NUL bytes, which alone would say binary)."""
    p = check_readable_file(path)
    size = p.stat().st_size
    if size == 0:
        raise DataIOError(f"{p} is empty (0 bytes)", path=p)
    with open(p, "rb") as f:
        head = f.read(HEAD_BYTES)
    kind = sniff(head)
    if declared is not None:
        if declared not in FORMATS:
            raise DataIOError(f"unknown format {declared!r}; known: {', '.join(FORMATS)}", path=p)
        fmt: Format | None = FORMATS[declared]
    else:
        fmt = format_for_extension(p)
    if fmt is None:
        by_magic = {
            "parquet": "parquet",
            "arrow": "feather",
            "feather1": "feather",
            "arrow_stream": "feather",
            "npy": "npy",
            "pickle": "pickle",
        }.get(kind)
        if kind == "zip":
            by_magic = {"npz": "npz", "excel": "excel"}.get(_zip_kind(p))
        if by_magic is None:
            known = ", ".join(sorted({e for f in FORMATS.values() for e in f.extensions}))
            raise DataIOError(
                f"{p}: unknown extension {p.suffix or '(none)'!r} and the contents "
                f"({KIND_LABELS.get(kind, kind)}) do not identify a format; "
                f"rename it with one of: {known}",
                path=p,
            )
        return FORMATS[by_magic]
    named_text = fmt.text and encoding is not None and decodes_as(head, encoding)
    if kind not in fmt.magic and not named_text:
        raise DataIOError(
            f"{p}: the extension says {fmt.label} but the contents look like "
            f"{KIND_LABELS.get(kind, kind)}"
            + (f" and do not decode as {encoding}" if fmt.text and encoding else "")
            + "; the file is misnamed or corrupt",
            path=p,
        )
    if fmt.name in ("npz", "excel"):
        zkind = _zip_kind(p)
        if zkind == "bad":
            raise DataIOError(f"{p}: the zip archive is truncated or corrupt", path=p)
        if zkind != fmt.name:
            other = {"excel": "an Excel workbook", "npz": "a NumPy .npz archive"}.get(
                zkind, "a zip archive of other files"
            )
            raise DataIOError(
                f"{p}: the extension says {fmt.label} but the archive is {other}", path=p
            )
    if fmt.name == "parquet":
        with open(p, "rb") as f:
            f.seek(max(size - 4, 0))
            if size < 12 or f.read(4) != b"PAR1":
                raise DataIOError(
                    f"{p}: the Parquet file is truncated or corrupt (its footer is missing)",
                    path=p,
                )
    return fmt


def npy_header(f: IO[bytes]) -> tuple[tuple[int, ...], bool, Any] | None:
    """The (shape, fortran order, dtype) a `.npy` file's header declares, read from *f* at
    its start without reading the data; None for a version this does not read (1.0 and
    2.0 are). ValueError when the header is corrupt."""
    from numpy.lib import format as npformat

    version = npformat.read_magic(f)
    if version == (1, 0):
        return npformat.read_array_header_1_0(f)
    if version == (2, 0):
        return npformat.read_array_header_2_0(f)
    return None
