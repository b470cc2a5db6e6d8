"""The field separator of a CSV/TSV file: given (`PATH:sep=;`), or sniffed from its first lines.

Sniffing splits the first lines with each of `,` `;` tab `|` (quotes respected) and keeps
the one that splits the header into the most fields while nearly every row has as many;
with no such split, the format's own separator (`,` for CSV, tab for TSV). A `;`-separated
file whose numbers have decimal commas (`12,5`, `1.234,5`) is read with those too.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass

from cave_tui.dataio.errors import DataIOError

SEPARATORS = (",", ";", "\t", "|")
SEPARATOR_NAMES = {"tab": "\t", "\\t": "\t", "comma": ",", "semicolon": ";", "pipe": "|"}
SNIFF_CHARS = 64 * 1024  # of decoded text
SNIFF_ROWS = 200
CONSISTENT = 0.9  # the share of rows with as many fields as the header
_DECIMAL_COMMA = re.compile(r"[-+]?\d+,\d+")
_GROUPED_COMMA = re.compile(r"[-+]?\d{1,3}(?:\.\d{3})+(?:,\d+)?")
_DECIMAL_POINT = re.compile(r"[-+]?\d*\.\d+")


@dataclass(frozen=True)
class Delimited:
    """How a delimited text file is split into fields and its numbers read."""

    sep: str
    sniffed: bool = False  # False: the format's default or the user's `sep=`
    decimal: str = "."
    thousands: str | None = None

    def label(self) -> str:
        """`';'`, or `tab`."""
        return "tab" if self.sep == "\t" else repr(self.sep)

    def option(self) -> str:
        """The `sep=` option that names this separator: `sep=;`, `sep=tab`."""
        return f"sep={'tab' if self.sep == chr(9) else self.sep}"


def check_separator(text: str, context: str = "") -> str:
    """The one-character separator *text* names (`;`, `';'`, `|`, `tab`, `\\t`); else a
    DataIOError."""
    if len(text) == 3 and text[0] == text[2] and text[0] in "'\"":
        text = text[1]
    sep = SEPARATOR_NAMES.get(text.lower(), text)
    if len(sep) != 1 or sep in "\"'\r\n":
        where = f"{context}: " if context else ""
        raise DataIOError(
            f"{where}the separator after 'sep=' must be one character, e.g. ';', '|' or tab "
            f"(not {text!r})"
        )
    return sep


def _rows(text: str, sep: str) -> list[list[str]]:
    reader = csv.reader(io.StringIO(text), delimiter=sep)
    rows: list[list[str]] = []
    try:
        for row in reader:
            if row:
                rows.append(row)
            if len(rows) >= SNIFF_ROWS:
                break
    except csv.Error:
        return []
    return rows


def _numbers(rows: list[list[str]]) -> tuple[str, str | None]:
    """(decimal, thousands) the fields of *rows* use: `,` and maybe `.` when numbers are
    written only with decimal commas."""
    fields = [f.strip() for row in rows for f in row]
    if any(_DECIMAL_POINT.fullmatch(f) and not _GROUPED_COMMA.fullmatch(f) for f in fields):
        return ".", None
    if not any(
        "," in f and (_DECIMAL_COMMA.fullmatch(f) or _GROUPED_COMMA.fullmatch(f)) for f in fields
    ):
        return ".", None  # `1.234` alone could be either
    return ",", "." if any(_GROUPED_COMMA.fullmatch(f) for f in fields) else None


def sniff_delimited(sample: str, default: str, given: str | None = None) -> Delimited:
    """How to split the text *sample* (the start of the file, maybe cut mid-line): with
    *given* when the user named it, else the sniffed separator or *default*."""
    text = sample[:SNIFF_CHARS]
    if len(sample) > len(text) or not text.endswith(("\n", "\r")):
        text = text[: max(text.rfind("\n"), 0)] or text  # drop a cut last line
    if given is not None:
        sep, sniffed = given, False
    else:
        sep, sniffed, best = default, False, 1
        for candidate in sorted(SEPARATORS, key=lambda s: s != default):
            rows = _rows(text, candidate)
            width = len(rows[0]) if rows else 0
            same = sum(len(r) == width for r in rows)
            if width > best and same >= CONSISTENT * len(rows):
                sep, sniffed, best = candidate, candidate != default, width
    decimal, thousands = (".", None) if sep == "," else _numbers(_rows(text, sep)[1:])
    return Delimited(sep, sniffed, decimal, thousands)
