"""Text encodings of data files: checked when given, detected when not.

A byte-order mark decides first (UTF-16 and UTF-32, as Excel's "Unicode text" writes);
then UTF-8; then cp1252 when the bytes read as ordinary Western European text in it
(spreadsheet exports; Latin-1 reads the same); else the encoding charset_normalizer
finds most plausible. An explicit encoding (`PATH:encoding=cp1252`) always wins.
"""

from __future__ import annotations

import codecs
import gzip
import re
import zlib
from pathlib import Path

from cave_tui.dataio.errors import DataIOError

SAMPLE_BYTES = 1 << 20  # detection reads at most this much of the file
MAX_CHAOS = 0.2  # charset_normalizer's mess ratio above which bytes are not taken as text
BOMS = (  # longest first: a UTF-32-LE mark starts with the UTF-16-LE one
    (codecs.BOM_UTF32_LE, "utf-32"),
    (codecs.BOM_UTF32_BE, "utf-32"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16"),
)
# The letters of French, German, Spanish, Portuguese, Italian, Dutch, Catalan and the
# Nordic languages that cp1252 and Latin-1 share. Central European, Turkish, Cyrillic or
# Greek bytes read in cp1252 give other characters, symbols inside words (Polish `ł` is
# `³`) or words with no ASCII letter at all.
WESTERN_LETTERS = frozenset("àáâãäåæçèéêëìíîïñòóôõöøùúûüÿßœªº" + "ÀÁÂÃÄÅÆÇÈÉÊËÌÍÎÏÑÒÓÔÕÖØÙÚÛÜŒ")
IN_WORD_MARKS = frozenset("’‘·")  # apostrophes (l’été) and the Catalan middle dot (l·l)
_CONTROL = re.compile(r"[\x00-\x08\x0b\x0e-\x1f\x7f]")
_NON_ASCII = re.compile(r"[^\x00-\x7f]")
_ACCENTED_WORD = re.compile(
    r"[^\W\d_]*[^\x00-\x7f\W\d_][^\W\d_]*"
)  # a word with a non-ASCII letter
_ASCII_LETTER = re.compile(r"[a-zA-Z]")


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


def bom_encoding(data: bytes) -> str | None:
    """ "utf-16" or "utf-32" when *data* starts with that byte-order mark (the codec reads it)."""
    for bom, name in BOMS:
        if data.startswith(bom):
            return name
    return None


def _between_letters(text: str, i: int) -> bool:
    return text[i - 1].isalpha() and text[i + 1].isalpha()


def _is_western(text: str) -> bool:
    """*text* (bytes read as cp1252) looks like ordinary Western European text."""
    if _CONTROL.search(text):
        return False
    for match in _NON_ASCII.finditer(text):
        c, i = match.group(), match.start()
        if c.isalpha():
            if c not in WESTERN_LETTERS:
                return False
        elif c not in IN_WORD_MARKS and 0 < i < len(text) - 1 and _between_letters(text, i):
            return False  # `Za¿ó³æ`: Polish read as cp1252
    accented = [w for w in _ACCENTED_WORD.findall(text) if len(w) > 1]  # not `à`, `è`
    foreign = [w for w in accented if _ASCII_LETTER.search(w) is None]
    return len(foreign) * 10 <= len(accented)  # Cyrillic or Greek read as cp1252: all


def guess_encoding(data: bytes) -> str | None:
    """The encoding of text *data* that is not UTF-8, or None when it does not look like text."""
    bom = bom_encoding(data)
    if bom is not None:
        return bom
    if b"\x00" in data:
        return None
    try:
        if _is_western(data.decode("cp1252")):
            return "cp1252"
    except UnicodeDecodeError:
        pass  # one of the five bytes cp1252 leaves undefined
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or best.chaos > MAX_CHAOS:
        return None
    return codecs.lookup(best.encoding).name


def looks_like_text(head: bytes) -> bool:
    """The first bytes of a file are text: a byte-order mark, UTF-8, or an encoding that
    can be detected."""
    if bom_encoding(head) is not None:
        return True
    return b"\x00" not in head and (_utf8(head) or guess_encoding(head) is not None)


def decodes_as(data: bytes, encoding: str) -> bool:
    """*data* (the start of a file, maybe cut mid-character) is text in *encoding*."""
    try:
        codecs.getincrementaldecoder(encoding)().decode(data, final=False)
    except UnicodeDecodeError:
        return False
    return True


def read_sample(path: Path) -> bytes:
    """The first bytes of *path* (decompressed for `.gz`) that detection looks at."""
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
    return encoding_of(read_sample(path))


def encoding_of(sample: bytes) -> str | None:
    """None when *sample* (a file's first bytes) is UTF-8 text; else the encoding it
    suggests (its byte-order mark, cp1252 for Western text, charset_normalizer's guess)."""
    if bom_encoding(sample) is None and _utf8(sample):
        return None
    return guess_encoding(sample)
