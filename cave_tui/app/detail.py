"""Saving one namespace object from the inspector (`r` in the detail view); the detail
itself is computed by `cave_tui.runtime.shipped.detail` where the object lives."""

from __future__ import annotations

import pickle
from pathlib import Path
from typing import Any, cast

from cave_tui.runtime.shipped.detail import Detail, human_bytes, is_frame, object_detail

__all__ = [
    "Detail",
    "default_filename",
    "free_path",
    "human_bytes",
    "object_detail",
    "write_object",
]


def default_filename(name: str, obj: object) -> str:
    return f"{name}.parquet" if is_frame(obj) else f"{name}.pkl"


def write_object(obj: object, path: Path) -> Path:
    """Save *obj* (a frame to parquet, anything else pickled with dill); never overwrites."""
    path = Path(path)
    if path.exists():
        raise FileExistsError(f"{path} already exists")
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(path.name + ".part")
    if is_frame(obj):
        found = cast(Any, obj)  # a pandas DataFrame or Series (`is_frame`)
        frame = found.to_frame() if type(obj).__name__ == "Series" else found
        frame.to_parquet(tmp)
    else:
        try:
            data = pickle.dumps(obj)
        except Exception:
            import dill

            data = dill.dumps(obj)
        tmp.write_bytes(data)
    tmp.replace(path)
    return path


def free_path(directory: Path, filename: str) -> Path:
    """*directory*/*filename*, or with -1, -2, … before the suffix when that exists."""
    path = directory / filename
    stem, suffix = path.stem, path.suffix
    n = 1
    while path.exists():
        path = directory / f"{stem}-{n}{suffix}"
        n += 1
    return path
