"""Reading a dump's pickles: the bytes are hashed and compared before one is deserialised.

`read_verified` reads a file once, through one descriptor that must be the file the
manifest checks looked at, and returns its bytes only if they hash to the manifest's
sha256; `unpickle` turns those very bytes into the object. A file replaced between the
check and the load, or a payload whose manifest was not updated, never reaches the
unpickler.
"""

from __future__ import annotations

import hashlib
import os
import pickle
from pathlib import Path
from typing import Any

from cave_tui.dataio.bounded_read import open_regular
from cave_tui.dataio.errors import DataIOError
from cave_tui.dataio.load import file_sha256
from cave_tui.dataio.manifest import CheckedFile

BLOCK = 1 << 20


def sha256_problem(checked: CheckedFile, actual: str | None = None) -> str | None:
    """Why *checked*'s bytes do not match its manifest entry, or None when they do."""
    entry = checked.entry
    digest = actual if actual is not None else file_sha256(checked.path)
    if digest == entry.sha256:
        return None
    return f"{entry.file} does not match its sha256 (variable {entry.name}): corrupt or changed"


def read_verified(checked: CheckedFile) -> bytes:
    """The bytes of *checked*'s file, if they are the ones its manifest entry hashes."""
    try:
        fd = open_regular(checked.path)
    except OSError as exc:
        detail = exc.strerror or exc
        raise DataIOError(f"cannot read {checked.path}: {detail}", path=checked.path) from None
    with os.fdopen(fd, "rb") as f:
        info = os.fstat(f.fileno())
        if (info.st_dev, info.st_ino) != (checked.stat.st_dev, checked.stat.st_ino):
            raise DataIOError(
                f"{checked.path} was replaced while the dump was being loaded", path=checked.path
            )
        digest = hashlib.sha256()
        parts = []
        while block := f.read(BLOCK):
            digest.update(block)
            parts.append(block)
    problem = sha256_problem(checked, digest.hexdigest())
    if problem is not None:
        raise DataIOError(f"{checked.path.parent}: {problem}", path=checked.path)
    return b"".join(parts)


def unpickle(data: bytes, fmt: str, path: Path) -> Any:
    """The object pickled (or dilled) in *data*, which came from *path*."""
    if fmt == "dill":
        import dill

        loads = dill.loads
    else:
        loads = pickle.loads
    try:
        return loads(data)
    except (EOFError, pickle.UnpicklingError) as exc:
        detail = str(exc) or type(exc).__name__
        message = f"{path}: the pickle is truncated or corrupt ({detail})"
        raise DataIOError(message, path=path) from None
    except (ModuleNotFoundError, AttributeError, ImportError) as exc:
        raise DataIOError(
            f"{path}: the pickle refers to code that is not available here ({exc})", path=path
        ) from None
