"""Text encodings of data files: checked when given, detected when not (charset_normalizer).

UTF-8 is assumed first; a text file whose bytes are not UTF-8 (Latin-1, cp1252 exports
from spreadsheets) gets the encoding charset_normalizer finds most plausible. An explicit
encoding (`PATH:encoding=cp1252`) always wins.
"""

from __future__ import annotations

import codecs
import gzip
import zlib
from pathlib import Path

from cave_tui.dataio.errors import DataIOError

SAMPLE_BYTES = 1 << 20  # detection reads at most this much of the file
MAX_CHAOS = 0.2  # charset_normalizer's mess ratio above which bytes are not taken as text
PREFERRED = ("cp1252", "latin_1")  # among equally plausible encodings
CHAOS_TIE = 0.01


def check_encoding(name: str, context: str = "") -> str:
    """The codec's canonical name for *name*; a `DataIOError` when Python has no such codec."""
    where = f"{context}: " if context else ""
    if not name:
        raise DataIOError(f"{where}the encoding after 'encoding=' is empty")
    try:
        info = codecs.lookup(name)
    except LookupError:
        raise DataIOError(
            f"{where}unknown encoding {name!r} (e.g. utf-8, cp1252, latin-1)"
        ) from None
    return info.name


def _utf8(data: bytes) -> bool:
    """*data* is UTF-8, allowing a multibyte character cut at the end of a sample."""
    try:
        data.decode("utf-8")
        return True
    except UnicodeDecodeError as exc:
        return exc.start >= len(data) - 4 and exc.reason == "unexpected end of data"


def guess_encoding(data: bytes) -> str | None:
    """The encoding of text *data* that is not UTF-8, or None when it does not look like text."""
    if b"\x00" in data:
        return None
    from charset_normalizer import from_bytes

    results = from_bytes(data)
    best = results.best()
    if best is None or best.chaos > MAX_CHAOS:
        return None
    # Short samples fit several code pages about as well (its language guess is weak on
    # them): among those as clean as the best, prefer the common Western ones.
    tied = [r for r in results if r.chaos <= best.chaos + CHAOS_TIE]
    for preferred in PREFERRED:
        if any(preferred in r.could_be_from_charset for r in tied):
            return codecs.lookup(preferred).name
    return codecs.lookup(best.encoding).name


def looks_like_text(head: bytes) -> bool:
    """The first bytes of a file are text, in UTF-8 or an encoding that can be detected."""
    return b"\x00" not in head and (_utf8(head) or guess_encoding(head) is not None)


def _sample(path: Path) -> bytes:
    if path.name.lower().endswith(".gz"):
        try:
            with gzip.open(path, "rb") as f:
                return f.read(SAMPLE_BYTES)
        except (OSError, EOFError, zlib.error):
            return b""
    with open(path, "rb") as f:
        return f.read(SAMPLE_BYTES)


def detect_encoding(path: Path) -> str | None:
    """None when *path* starts as UTF-8 text; else the encoding its first bytes suggest."""
    sample = _sample(path)
    if _utf8(sample):
        return None
    return guess_encoding(sample)
