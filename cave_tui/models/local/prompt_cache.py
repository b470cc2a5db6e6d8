"""The embedded model's saved prompt: llama.cpp's state after a cave's first answer, kept on
disk so the next start does not compute cave's system prompt again (about half of a first
answer's time on 2 cores).

One file per (weights, context size, llama.cpp build, cave version) in `prompt-cache/` beside
the weights. It is restored into the server's slot when the server starts, and replaced after
the server's first answer when that answer's prompt computed more tokens than the file held
(LocalServer.save_prompt). llama.cpp reuses only the tokens a new prompt shares with the
saved one, so a file from another prompt costs its read and nothing else. A file llama.cpp
refuses (another build, a damaged file) is removed and saved again.
"""

from __future__ import annotations

import hashlib
import os
import re
import time
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

from cave_tui.models.local.weights import Weights, cache_dir

SUFFIX = ".slot"
STALE_SECONDS = 30 * 24 * 3600  # other prompt files unused this long are removed on a save
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]+")  # no dots: llama.cpp refuses ".." in a name


def default_folder() -> Path:
    """`prompt-cache/` in the weights' folder (`CAVE_MODELS_DIR`, else the user's cache)."""
    return cache_dir() / "prompt-cache"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "unknown"


@dataclass(frozen=True)
class PromptCache:
    """Where one server's prompt state is saved, and under which file name."""

    folder: Path
    name: str  # a bare file name, as llama.cpp's slot actions take it

    @classmethod
    def for_weights(
        cls, weights: Weights, context_size: int, folder: Path | None = None
    ) -> PromptCache:
        """The cache of *weights* served with *context_size*: a state saved by another build
        of llama.cpp, another cave or other weights is never offered to this one."""
        stat = weights.path.stat()
        key = "|".join(
            (str(weights.path.resolve()), str(stat.st_size), str(stat.st_mtime_ns),
             str(context_size), _version("xllamacpp"), _version("cave-tui"))
        )  # fmt: skip
        digest = hashlib.sha256(key.encode()).hexdigest()[:16]
        stem = _UNSAFE.sub("-", weights.alias)[:48] or "model"
        return cls(folder or default_folder(), f"{stem}-{digest}{SUFFIX}")

    @property
    def path(self) -> Path:
        return self.folder / self.name

    def temporary_name(self) -> str:
        """A name for one save in progress (renamed over `name` once llama.cpp wrote it)."""
        return f"{self.name}.{os.getpid()}-{time.monotonic_ns()}.tmp"

    def prepare(self) -> bool:
        """Make the folder (private to the user); False when it cannot be made."""
        try:
            self.folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        except OSError:
            return False
        return self.folder.is_dir()

    def commit(self, temporary: str) -> None:
        """Put the file saved as *temporary* in place, and remove prompt files left by killed
        saves or unused for a month."""
        os.replace(self.folder / temporary, self.path)
        now = time.time()
        for other in self.folder.iterdir():
            if other.name == self.name or not other.name.endswith((SUFFIX, ".tmp")):
                continue
            try:
                old = now - other.stat().st_atime > (
                    STALE_SECONDS if other.name.endswith(SUFFIX) else 3600
                )
                if old:
                    other.unlink()
            except OSError:
                pass  # another cave removed it, or it is not ours to remove

    def discard(self) -> None:
        """Remove the saved file (llama.cpp refused it)."""
        try:
            self.path.unlink()
        except OSError:
            pass
