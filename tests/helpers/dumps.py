"""Hand-made dumps for trust tests: a pickle whose payload leaves a marker file, and a
manifest written entry by entry (sizes and sha256s right unless a test says otherwise)."""

from __future__ import annotations

import hashlib
import json
import pickle
from pathlib import Path
from typing import Any


class MarkerPayload:
    """Unpickling this writes the unpickling process's id to *marker*: proof code ran."""

    def __init__(self, marker: Path) -> None:
        self.marker = str(marker)

    def __reduce__(self) -> tuple[Any, ...]:
        code = f"import os; open({self.marker!r}, 'w').write(str(os.getpid()))"
        return (exec, (code,))


def payload(marker: Path) -> bytes:
    return pickle.dumps(MarkerPayload(marker))


def entry_for(folder: Path, name: str, file: str, fmt: str, **override: Any) -> dict[str, Any]:
    """The manifest entry of `folder/file` as cave writes it, with *override* applied."""
    data = (folder / file).read_bytes()
    entry = {
        "name": name,
        "type": "object",
        "module": "builtins",
        "format": fmt,
        "file": file,
        "bytes": len(data),
        "sha256": hashlib.sha256(data).hexdigest(),
    }
    entry.update(override)
    return entry


def write_manifest(folder: Path, variables: list[dict[str, Any]], **extra: Any) -> Path:
    manifest = {"format": "cave-dump", "version": 1, "variables": variables, **extra}
    (folder / "manifest.json").write_text(json.dumps(manifest, indent=1))
    return folder


def rehash(folder: Path, name: str) -> None:
    """Make the manifest's size and sha256 of *name* match its file again (a careful forger)."""
    path = folder / "manifest.json"
    manifest = json.loads(path.read_text())
    for entry in manifest["variables"]:
        if entry["name"] == name:
            entry.update(entry_for(folder, name, entry["file"], entry["format"]))
    path.write_text(json.dumps(manifest, indent=1))


def replace_with_payload(folder: Path, name: str, marker: Path) -> Path:
    """Overwrite *name*'s file in the dump at *folder* with a payload pickle of the same
    size (padded after its STOP opcode, which unpicklers never read); returns the file."""
    manifest = json.loads((folder / "manifest.json").read_text())
    entry = next(e for e in manifest["variables"] if e["name"] == name)
    target = folder / entry["file"]
    data = payload(marker)
    assert len(data) <= entry["bytes"], "make the original bigger than the payload"
    target.write_bytes(data.ljust(entry["bytes"], b" "))
    return target
