"""A compact copy of a tiktoken encoding's ranks, so a process builds its tokenizer fast.

tiktoken reads its `.tiktoken` file as base64 text, a line per token: parsing it costs
about 0.2 CPU-seconds in every process that counts tokens (each `cave` command, each
front end). The copy holds the same ranks as raw bytes with their lengths, read back in a
tenth of that. It is data only (no pickle): a damaged or foreign file is refused and
rebuilt from tiktoken's own, checked, file.

Layout: one JSON line (format, encoding name, tiktoken's version, the pattern, the special
tokens, the number of tokens), then the tokens' lengths (uint16), their ranks (uint32), both
little-endian, then the tokens' bytes one after another.
"""

from __future__ import annotations

import json
import os
import sys
import tempfile
from array import array
from itertools import accumulate
from pathlib import Path
from typing import Any

FORMAT = 1


def _encoded(values: array[int]) -> bytes:
    if sys.byteorder != "little":
        values = array(values.typecode, values)
        values.byteswap()
    return values.tobytes()


def _decoded(typecode: str, data: bytes) -> array[int]:
    values = array(typecode)
    values.frombytes(data)
    if sys.byteorder != "little":
        values.byteswap()
    return values


def write(path: Path, spec: dict[str, Any], version: str) -> None:
    """Save *spec* (tiktoken's constructor arguments: name, pat_str, mergeable_ranks,
    special_tokens) at *path*, atomically; a folder that cannot be written is left alone."""
    ranks: dict[bytes, int] = spec["mergeable_ranks"]
    tokens = list(ranks)
    header = {
        "format": FORMAT,
        "name": spec["name"],
        "tiktoken": version,
        "pat_str": spec["pat_str"],
        "special_tokens": spec["special_tokens"],
        "count": len(tokens),
    }
    body = [
        json.dumps(header).encode() + b"\n",
        _encoded(array("H", map(len, tokens))),
        _encoded(array("I", ranks.values())),
        b"".join(tokens),
    ]
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
        try:
            with os.fdopen(fd, "wb") as out:
                out.writelines(body)
            os.replace(temp, path)
        except BaseException:
            Path(temp).unlink(missing_ok=True)
            raise
    except OSError:
        pass


def read(path: Path, name: str, version: str) -> dict[str, Any] | None:
    """The constructor arguments saved at *path* for encoding *name* by tiktoken *version*;
    None when there is no such file or it is not one (damaged, foreign, another version)."""
    try:
        data = path.read_bytes()
    except OSError:
        return None
    try:
        line, _, rest = data.partition(b"\n")
        header = json.loads(line)
        if (header.get("format"), header.get("name"), header.get("tiktoken")) != (
            FORMAT,
            name,
            version,
        ):
            return None
        count = int(header["count"])
        lengths = _decoded("H", rest[: 2 * count])
        ranks = _decoded("I", rest[2 * count : 6 * count])
        blob = rest[6 * count :]
        if len(lengths) != count or len(ranks) != count or sum(lengths) != len(blob):
            return None
        ends = list(accumulate(lengths))
        tokens = [blob[end - size : end] for end, size in zip(ends, lengths, strict=True)]
        mergeable = dict(zip(tokens, ranks, strict=True))
        special = {str(k): int(v) for k, v in dict(header["special_tokens"]).items()}
        if len(mergeable) != count or not isinstance(header["pat_str"], str):
            return None
    except (ValueError, KeyError, TypeError, AttributeError):
        return None
    return {
        "name": name,
        "pat_str": header["pat_str"],
        "mergeable_ranks": mergeable,
        "special_tokens": special,
    }
