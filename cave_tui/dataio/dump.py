"""Namespace dumps: every user variable in a folder, with a `manifest.json`.

`dump_namespace` writes a complete new dump into a hidden staging folder and then
puts it in place (swapped with the old one beside it, or committed by its manifest
inside a mount point: dataio/staging.py), so an interrupted dump always leaves the
previous one intact, and the next dump removes what a killed one left.
`checkpoint_namespace` updates a dump in place, rewriting only what changed: new
files get new names and the manifest (replaced atomically) is the commit point.
`load_dump` restores either kind, checking every file's size and sha256.
Over 400 lines: the writer, the in-place checkpoint and the loader share one manifest
format and its crash-recovery rules, which are easier to keep right side by side.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import hashlib
import json
import os
import threading
import time
from collections.abc import Callable, Collection, Iterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cave_tui.dataio.atomic import atomic_write_text, fsync_path
from cave_tui.dataio.errors import DataIOError, TrustRequiredError, describe_os_error
from cave_tui.dataio.names import unloadable_name
from cave_tui.dataio.progress import ProgressCallback
from cave_tui.dataio.save import EXTENSIONS, Unsuitable, candidate_formats, write_in_format
from cave_tui.dataio.staging import (
    MOUNT_FURNITURE,
    Staging,
    disk_full,
    is_staging_folder,
    remove_stale,
)

if TYPE_CHECKING:  # the manifest schema needs pydantic: imported only when a dump is read
    from cave_tui.dataio.manifest import CheckedFile, Manifest, Restore

MANIFEST = "manifest.json"
DUMP_FORMAT = "cave-dump"
DUMP_VERSION = 1
RESAVE_BELOW = 8 << 20  # checkpoints re-save objects under this size even if not reported changed


@dataclass
class DumpResult:
    """What a dump or checkpoint wrote, and what it could not save (with why)."""

    directory: Path
    saved: list[dict[str, Any]] = field(default_factory=list)  # manifest entries
    modules: list[dict[str, str]] = field(default_factory=list)  # {"name": "pd", "module": …}
    skipped: list[dict[str, Any]] = field(default_factory=list)  # {"name", "type", "reason"}
    written: list[str] = field(default_factory=list)  # names (re)written by this call
    seconds: float = 0.0

    @property
    def bytes(self) -> int:
        return sum(int(e["bytes"]) for e in self.saved)

    @property
    def names(self) -> list[str]:
        return [e["name"] for e in self.saved]

    def summary(self) -> str:
        text = f"{len(self.saved)} variables ({self.bytes:,} bytes) in {self.directory}"
        if self.skipped:
            why = (f"{s['name']} ({s['reason']})" for s in self.skipped)
            text += "; not saved: " + "; ".join(why)
        return text


# -- what to save ------------------------------------------------------------------------
async def _candidates(
    runtime: Any,
) -> tuple[list[Any], list[dict[str, str]], list[dict[str, Any]]]:
    """Summary rows worth saving, imported modules (saved by name), rows skipped with why."""
    from cave_tui.runtime.items import Function, Type

    injected = runtime.injected
    keep: list[Any] = []
    modules: list[dict[str, str]] = []
    skipped: list[dict[str, Any]] = []
    for row in await runtime.namespace_summary():
        item = injected.get(row.name)
        if (why := unloadable_name(row.name)) is not None:  # a dump must load back
            skipped.append(_skip(row, why))
        elif row.kind == "module":
            if row.preview and not row.preview.startswith("__"):
                modules.append({"name": row.name, "module": row.preview})
            else:
                skipped.append(_skip(row, "a module that cannot be imported by name"))
        elif isinstance(item, Function | Type):
            skipped.append(_skip(row, "injected by the host program, which injects it again"))
        else:
            keep.append(row)
    return keep, modules, skipped


def _skip(row: Any, reason: str) -> dict[str, Any]:
    return {"name": row.name, "type": row.type_name, "reason": reason}


class _HashFollower(threading.Thread):
    """Hashes a file while it is being written, following its end like `tail -f`.

    Every writer here appends sequentially, so the bytes read are final; hashing on
    another core this way costs the dump almost no time, even for a single object.
    """

    def __init__(self, path: Path) -> None:
        super().__init__(name="cave-dump-hash", daemon=True)
        self.path = path
        self.done = threading.Event()  # the writer closed the file
        self.abandon = threading.Event()  # the write failed: stop
        self.sha256: str | None = None
        self.error: BaseException | None = None

    def run(self) -> None:
        try:
            self._follow()
        except BaseException as exc:
            self.error = exc

    def _follow(self) -> None:
        while not self.path.exists():
            if self.abandon.is_set() or self.done.is_set():
                return
            time.sleep(0.002)
        digest = hashlib.sha256()
        with open(self.path, "rb") as f:
            while not self.abandon.is_set():
                chunk = f.read(1 << 20)
                if chunk:
                    digest.update(chunk)
                elif self.done.is_set():
                    if not (chunk := f.read()):
                        self.sha256 = digest.hexdigest()
                        return
                    digest.update(chunk)
                else:
                    time.sleep(0.003)


def _write_entry(
    obj: Any, name: str, folder: Path, stem: str
) -> tuple[dict[str, Any], _HashFollower]:
    """Write *obj* as `folder/stem.<ext>` in the first format that fits; raises Unsuitable."""
    notes = []
    for fmt in candidate_formats(obj):
        path = folder / f"{stem}{EXTENSIONS[fmt]}"
        with contextlib.suppress(FileNotFoundError):
            path.unlink()  # a leftover of a crashed run must not be hashed
        follower = _HashFollower(path)
        follower.start()
        try:
            restore = write_in_format(obj, path, fmt, checksums=False)  # sha256 covers it
        except Unsuitable as exc:
            follower.abandon.set()
            notes.append(str(exc))
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        except BaseException:
            follower.abandon.set()
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        follower.done.set()
        entry: dict[str, Any] = {
            "name": name,
            "type": type(obj).__name__,
            "module": type(obj).__module__,
            "format": fmt,
            "file": path.name,
            "bytes": path.stat().st_size,
        }
        if restore:
            entry["restore"] = restore
        return entry, follower
    raise Unsuitable("; ".join(notes) or "no format fits")


def _finish_file(path: Path, follower: _HashFollower, sync: bool) -> str:
    """Wait for the file's sha256, then fsync it (runs beside the next write)."""
    follower.join()
    if follower.error is not None or follower.sha256 is None:
        from cave_tui.dataio.load import file_sha256

        sha = file_sha256(path)
    else:
        sha = follower.sha256
    if sync:
        fsync_path(path)
    return sha


class _Writer:
    """Writes objects one at a time; hashes and fsyncs each on a second thread meanwhile."""

    def __init__(self, folder: Path, sync: bool) -> None:
        self.folder = folder
        self.sync = sync
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="cave-dump")
        self._pending: list[tuple[dict[str, Any], concurrent.futures.Future[str]]] = []

    async def write(self, obj: Any, name: str, stem: str) -> dict[str, Any]:
        entry, follower = await asyncio.to_thread(_write_entry, obj, name, self.folder, stem)
        path = self.folder / entry["file"]
        fut = self._pool.submit(_finish_file, path, follower, self.sync)
        self._pending.append((entry, fut))
        return entry

    async def finish(self) -> None:
        try:
            for entry, fut in self._pending:
                entry["sha256"] = await asyncio.wrap_future(fut)
        finally:
            self._pool.shutdown(wait=True)


def _manifest(result: DumpResult) -> str:
    from cave_tui import __version__

    data = {
        "format": DUMP_FORMAT,
        "version": DUMP_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cave_version": __version__,
        "variables": result.saved,
        "modules": result.modules,
        "skipped": result.skipped,
    }
    return json.dumps(data, indent=1, ensure_ascii=False, default=str)


# -- full dumps, staged then put in place (dataio/staging.py) ----------------------------
def check_dump_target(target: Path) -> None:
    """Raise `DataIOError` if *target* cannot take a dump: a file, or a folder of other files."""
    if target.exists() and not target.is_dir():
        raise DataIOError(f"cannot dump into {target}: it is a file, not a folder", path=target)
    if target.is_dir() and not (target / MANIFEST).exists() and _holds_other_files(target):
        raise DataIOError(
            f"cannot dump into {target}: the folder holds other files and is not a cave dump "
            "(choose an empty or new folder)",
            path=target,
        )


def _holds_other_files(target: Path) -> bool:
    return any(p.name not in MOUNT_FURNITURE and not is_staging_folder(p) for p in target.iterdir())


async def dump_namespace(
    runtime: Any,
    directory: str | Path,
    *,
    sync: bool = True,
    progress: ProgressCallback | None = None,
) -> DumpResult:
    """Write every user variable of *runtime* to *directory* with a manifest.

    Objects that cannot be saved (modules, unpicklable objects, host-injected
    functions) are listed in the manifest's `skipped` with the reason. The previous
    dump in *directory* stays intact until the new one is complete.
    """
    from cave_tui.dataio.progress import Progress

    started = time.perf_counter()
    target = Path(directory).expanduser().absolute()
    remove_stale(target)  # what killed dumps left (never a dump still being written)
    check_dump_target(target)
    try:
        staging = Staging.create(target)
    except OSError as exc:
        raise DataIOError(describe_os_error(exc, "write", target), path=target) from None
    result = DumpResult(target)
    writer = _Writer(staging.path, sync)
    try:
        rows, result.modules, result.skipped = await _candidates(runtime)
        used: set[str] = set()
        for i, row in enumerate(rows):
            if progress is not None:
                progress(Progress(i, len(rows), "variables", "writing", str(target)))
            try:
                obj = await runtime.retrieve(row.name)
            except KeyError:
                continue
            except Exception as exc:  # e.g. the kernel runtime refuses to send it back
                result.skipped.append(_skip(row, f"could not be retrieved: {exc}"))
                continue
            stem = _unique_stem(row.name, used)
            try:
                entry = await writer.write(obj, row.name, stem)
            except Unsuitable as exc:
                result.skipped.append(_skip(row, f"cannot be saved: {exc}"))
                continue
            if row.description:
                entry["description"] = row.description
            result.saved.append(entry)
            result.written.append(row.name)
        await writer.finish()
        staging.commit(result.saved, lambda: _manifest(result), sync=sync)
    except OSError as exc:
        if exc.errno is None and disk_full(staging.path):  # numpy's short writes carry no errno
            exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        staging.discard()
        raise DataIOError(
            describe_os_error(exc, "write", target) + "; the previous dump is intact", path=target
        ) from None
    except BaseException:
        await asyncio.shield(asyncio.to_thread(staging.discard))
        raise
    remove_stale(target)  # copies a finished swap left beside the target
    result.seconds = time.perf_counter() - started
    return result


def _unique_stem(name: str, used: set[str]) -> str:
    """File stems unique even on case-insensitive file systems."""
    stem = name
    n = 2
    while stem.lower() in used:
        stem = f"{name}-{n}"
        n += 1
    used.add(stem.lower())
    return stem


# -- incremental checkpoints (session snapshots) ----------------------------------------
def small_enough(obj: Any, limit: int, max_items: int = 10_000) -> bool:
    """True if *obj*, followed into containers and attributes, is under *limit* bytes.

    Bounded cost: gives up (False) after *max_items* objects. Frames and arrays
    count their buffers, so a dict holding a large frame is not "small".
    """
    from cave_tui.runtime.summary import _size_of

    total = 0
    seen: set[int] = set()
    stack = [obj]
    visited = 0
    while stack:
        item = stack.pop()
        if id(item) in seen:
            continue
        seen.add(id(item))
        visited += 1
        total += _size_of(item) or 0
        if total >= limit or visited > max_items:
            return False
        if isinstance(item, dict):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple | set | frozenset):
            stack.extend(item)
        elif hasattr(item, "__dict__") and not isinstance(item, type):
            module = type(item).__module__ or ""
            if not module.startswith(("pandas", "numpy", "pyarrow")):
                stack.extend(vars(item).values())
    return True


async def checkpoint_namespace(
    runtime: Any,
    directory: str | Path,
    *,
    changed: Iterable[str] | None = None,
    resave_below: int = RESAVE_BELOW,
    sync: bool = True,
    carry: Iterable[dict[str, Any]] = (),
) -> DumpResult:
    """Bring the dump in *directory* up to date with the namespace, writing only what changed.

    Names in *changed* (None: everything), new names, and objects smaller than
    *resave_below* bytes (in case they were mutated unseen) are written to new
    files; identical content keeps the old file. The manifest is replaced
    atomically last, so a crash leaves the previous checkpoint complete.
    *carry* entries (pickles a resume was not trusted to load) stay listed, with
    their files, while their names are not bound again.
    """
    started = time.perf_counter()
    folder = Path(directory).expanduser().absolute()
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise DataIOError(describe_os_error(exc, "write", folder), path=folder) from None
    old = (
        {e["name"]: e for e in _read_manifest_file(folder)["variables"]}
        if (folder / MANIFEST).exists()
        else {}
    )
    changed_set = None if changed is None else set(changed)
    result = DumpResult(folder)
    rows, result.modules, result.skipped = await _candidates(runtime)
    writer = _Writer(folder, sync)
    fresh: list[tuple[dict[str, Any], dict[str, Any] | None]] = []
    entries: dict[str, dict[str, Any]] = {}
    try:
        for row in rows:
            prev = old.get(row.name)
            sweep = (
                prev is not None
                and changed_set is not None
                and row.name not in changed_set
                and (row.size_bytes or 0) < resave_below
            )
            unchanged = not (changed_set is None or row.name in changed_set or sweep)
            if prev is not None and unchanged:
                entries[row.name] = prev
                continue
            try:
                obj = await runtime.retrieve(row.name)
            except KeyError:
                continue
            except Exception as exc:
                if prev is not None:
                    entries[row.name] = prev
                else:
                    result.skipped.append(_skip(row, f"could not be retrieved: {exc}"))
                continue
            if prev is not None and sweep and not small_enough(obj, resave_below):
                entries[row.name] = prev
                continue
            version = int(prev.get("version", 0)) + 1 if prev else 1
            try:
                entry = await writer.write(obj, row.name, f"{row.name}.{version}")
            except Unsuitable as exc:
                result.skipped.append(_skip(row, f"cannot be saved: {exc}"))
                continue
            entry["version"] = version
            if row.description:
                entry["description"] = row.description
            entries[row.name] = entry
            fresh.append((entry, prev))
        await writer.finish()
    except OSError as exc:
        for entry, _ in fresh:
            with contextlib.suppress(OSError):
                (folder / entry["file"]).unlink()
        raise DataIOError(
            describe_os_error(exc, "write", folder) + "; the previous snapshot is intact",
            path=folder,
        ) from None
    for entry, prev in fresh:
        if (
            prev is not None
            and prev.get("sha256") == entry["sha256"]
            and prev["format"] == entry["format"]
            and (folder / prev["file"]).exists()
        ):
            with contextlib.suppress(OSError):
                (folder / entry["file"]).unlink()
            entries[entry["name"]] = prev
        else:
            result.written.append(entry["name"])
    result.saved = [entries[r.name] for r in rows if r.name in entries]
    bound = {r.name for r in rows} | {m["name"] for m in result.modules}
    bound |= {s["name"] for s in result.skipped}
    result.saved += [e for e in carry if e["name"] not in bound and (folder / e["file"]).is_file()]
    try:
        atomic_write_text(folder / MANIFEST, _manifest(result), sync=sync)
    except OSError as exc:
        raise DataIOError(
            describe_os_error(exc, "write", folder / MANIFEST) + "; the last snapshot is intact",
            path=folder,
        ) from None
    keep = {e["file"] for e in result.saved} | {MANIFEST}
    for path in folder.iterdir():
        if path.name not in keep and path.is_file():
            with contextlib.suppress(OSError):
                path.unlink()
    result.seconds = time.perf_counter() - started
    return result


# -- reading dumps back ---------------------------------------------------------------------
def _read_manifest_file(folder: Path) -> dict[str, Any]:
    path = folder / MANIFEST
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise DataIOError(f"{folder} is not a cave dump (no {MANIFEST})", path=folder) from None
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise DataIOError(f"{path} is corrupt ({exc})", path=path) from None
    if not isinstance(data, dict) or data.get("format") != DUMP_FORMAT:
        raise DataIOError(f"{path} is not a cave dump manifest", path=path)
    if int(data.get("version", 0)) > DUMP_VERSION:
        raise DataIOError(f"{path} was written by a newer cave (dump v{data['version']})")
    data.setdefault("variables", [])
    data.setdefault("skipped", [])
    data.setdefault("modules", [])
    return data


def resolve_dump_dir(directory: str | Path) -> Path:
    """*directory*, or the complete dump left beside it by a swap that was interrupted."""
    folder = Path(directory).expanduser().absolute()
    if (folder / MANIFEST).exists():
        return folder
    if folder.exists() and not folder.is_dir():
        raise DataIOError(f"{folder} is a file, not a dump folder", path=folder)
    parent = folder.parent
    leftovers = []
    if parent.is_dir():
        for entry in parent.iterdir():
            name = entry.name
            if (
                name.startswith(f".{folder.name}.")
                and name.endswith(".tmp")
                and entry.is_dir()
                and (entry / MANIFEST).exists()
            ):
                leftovers.append(entry)
    if leftovers:
        return max(leftovers, key=lambda p: (p / MANIFEST).stat().st_mtime)
    if not folder.exists():
        raise DataIOError(f"{folder}: no such dump folder", path=folder)
    raise DataIOError(f"{folder} is not a cave dump (no {MANIFEST})", path=folder)


def _valid_manifest(folder: Path) -> tuple[Manifest, bytes]:
    from cave_tui.dataio.manifest import parse_manifest

    return parse_manifest(folder / MANIFEST, fmt=DUMP_FORMAT, version=DUMP_VERSION)


def read_manifest(directory: str | Path) -> dict[str, Any]:
    """The manifest of the dump at *directory* (recovering an interrupted swap), validated.

    Raises `ManifestError` listing every problem when it does not fit the schema.
    """
    manifest, _ = _valid_manifest(resolve_dump_dir(directory))
    return manifest.model_dump(by_alias=True, exclude_none=True)


# (the manifest's bytes, the names it lists) -> the names trusted without --trust
Vouch = Callable[[bytes, list[str]], Collection[str]]
NOT_TRUSTED = "pickled, and not trusted: loading it runs code stored in it; kept for --trust"


@dataclass
class LoadedDump:
    directory: Path
    names: list[str]
    skipped: list[dict[str, Any]]  # what the dump itself could not save
    values: dict[str, Any] = field(default_factory=dict, repr=False)
    modules: list[dict[str, str]] = field(default_factory=list)  # imports to redo
    not_restored: list[dict[str, str]] = field(default_factory=list)  # {"name", "reason"}
    held: list[dict[str, Any]] = field(default_factory=list)  # entries left out: not trusted
    descriptions: dict[str, str] = field(default_factory=dict)

    def summary(self) -> str:
        """One line for the user: what was restored from where, and what was not."""
        text = f"{len(self.names)} variables from {self.directory}"
        if self.names:
            shown = ", ".join(f"`{name}`" for name in self.names[:8])
            more = f" and {len(self.names) - 8} more" if len(self.names) > 8 else ""
            text += f": {shown}{more}"
        if self.not_restored:
            text += "; not restored: " + "; ".join(
                f"{n['name']} ({n['reason']})" for n in self.not_restored
            )
        return text


def check_dump(directory: str | Path, *, vouch: Vouch | None = None) -> list[str]:
    """Check the dump at *directory* without loading it (the manifest, and each file's
    presence and size); returns the names that would need trust. Raises like `read_dump`."""
    from cave_tui.dataio.manifest import check_files

    folder = resolve_dump_dir(directory)
    manifest, raw = _valid_manifest(folder)
    check_files(manifest, folder)
    trusted = vouch(raw, manifest.names()) if vouch is not None else ()
    return manifest.untrusted(folder, trusted)


def _trust_message(folder: Path, manifest: Manifest, untrusted: set[str]) -> str:
    from cave_tui.dataio.module_trust import module_source

    pickled = [e.name for e in manifest.variables if e.name in untrusted]
    modules = [
        f"{m.name} = {m.module}, {module_source(m.module, [folder]).value}"
        for m in manifest.modules
        if m.name in untrusted
    ]
    parts = []
    if pickled:
        parts.append(f"holds pickled objects ({', '.join(pickled)}), which run code when loaded")
    if modules:
        parts.append(f"imports modules that are not installed packages ({'; '.join(modules)})")
    return (
        f"the dump {folder} " + " and ".join(parts) + "; load it only if you trust it "
        "(confirm, or pass --trust)"
    )


def _load_safe(checked: CheckedFile, verify: bool) -> tuple[Any, str | None]:
    """A file in a format that runs no code, and why its sha256 does not match (or None)."""
    from cave_tui.dataio.load import load_file
    from cave_tui.dataio.verified import sha256_problem

    entry, path = checked.entry, checked.path
    try:
        loaded = load_file(path, fmt=entry.format, trust=False, compute_sha256=verify)
    except TrustRequiredError:  # an object array: cave never writes one outside a pickle
        raise DataIOError(
            f"dump {path.parent}: {entry.file} (variable {entry.name}) holds pickled objects, "
            f"which a cave dump never stores as {entry.format}: the file was changed",
            path=path,
        ) from None
    problem = sha256_problem(checked, loaded.sha256) if verify and loaded.sha256 else None
    return _restore(loaded.value, entry.restore, path), problem


def read_dump(
    directory: str | Path,
    *,
    trust: bool = False,
    verify: bool = True,
    vouch: Vouch | None = None,
    hold_back: bool = False,
    unpickle: bool = True,
) -> LoadedDump:
    """Load every object of a dump (blocking). Nothing is returned unless all load.

    The manifest and every file are checked first (a `ManifestError` lists every
    problem). Pickles, and modules that are not installed packages, need *trust*, or
    their name among those *vouch* returns for the manifest's bytes (a session's seal):
    without it a `TrustRequiredError` names them, or, with *hold_back*, they are left
    out (`held`, `not_restored`). Every pickle is hashed and compared with the manifest
    before a byte of any is unpickled (always; *verify* covers the other formats); with
    *unpickle* False the verified bytes come back as `Pickled`, for a runtime that
    unpickles them in its own process.
    """
    from cave_tui.dataio.manifest import ManifestError, check_files
    from cave_tui.dataio.module_trust import ModuleSource, module_source
    from cave_tui.dataio.verified import read_verified, sha256_problem
    from cave_tui.dataio.verified import unpickle as unpickle_bytes
    from cave_tui.runtime.items import Pickled

    folder = resolve_dump_dir(directory)
    manifest, raw = _valid_manifest(folder)
    checked = check_files(manifest, folder)
    trusted = vouch(raw, manifest.names()) if vouch is not None and not trust else ()
    untrusted = set() if trust else set(manifest.untrusted(folder, trusted))
    if untrusted and not hold_back:
        raise TrustRequiredError(_trust_message(folder, manifest, untrusted), path=folder)
    risky = [c for c in checked if c.entry.runs_code]
    problems = [p for c in risky if (p := sha256_problem(c)) is not None]
    if problems:  # before a byte of any pickle is unpickled
        raise ManifestError(folder, problems)
    dump = LoadedDump(
        folder,
        [],
        [s.model_dump(exclude_none=True) for s in manifest.skipped],
        descriptions={e.name: e.description for e in manifest.variables if e.description},
    )
    values: dict[str, Any] = {}
    for item in checked:
        entry = item.entry
        if entry.name in untrusted:
            dump.held.append(entry.model_dump(by_alias=True, exclude_none=True))
            dump.not_restored.append({"name": entry.name, "reason": NOT_TRUSTED})
        elif not entry.runs_code:
            values[entry.name], problem = _load_safe(item, verify)
            if problem is not None:
                problems.append(problem)
    if problems:
        raise ManifestError(folder, problems)
    for item in risky:
        entry = item.entry
        if entry.name not in untrusted:
            data = read_verified(item)
            if unpickle:
                values[entry.name] = unpickle_bytes(data, entry.format, item.path)
            else:
                values[entry.name] = Pickled(data, entry.format)
    dump.values = {e.name: values[e.name] for e in manifest.variables if e.name in values}
    dump.names = list(dump.values)
    for module in manifest.modules:
        source = module_source(module.module, [folder])
        if module.name in untrusted:
            reason = f"imports {module.module}, {source.value}: not trusted (--trust imports it)"
            dump.not_restored.append({"name": module.name, "reason": reason})
        elif source is ModuleSource.MISSING:
            reason = f"module {module.module} is not installed here"
            dump.not_restored.append({"name": module.name, "reason": reason})
        else:
            dump.modules.append({"name": module.name, "module": module.module})
    return dump


def _restore(value: Any, restore: Restore | None, path: Path) -> Any:
    kind = restore.as_ if restore is not None else None
    if kind == "series":
        series = value.iloc[:, 0]
        series.name = restore.name if restore is not None else None
        return series
    if kind == "arrow":
        import pyarrow.parquet as pq

        return pq.read_table(path)
    return value


async def load_dump(
    runtime: Any,
    directory: str | Path,
    *,
    trust: bool = False,
    verify: bool = True,
    vouch: Vouch | None = None,
    hold_back: bool = False,
) -> LoadedDump:
    """Restore a dump into *runtime* (replacing same-named variables). All or nothing.

    Everything is checked and read (`read_dump`, same options) before the first value
    is injected. A runtime that unpickles in its own process (the kernel runtime) gets
    the verified pickle bytes, so code in a trusted pickle runs there, not in the host.
    Staging folders that killed dumps left beside (or in) *directory* are removed first.
    """
    from cave_tui.dataio.inject import inject_variable
    from cave_tui.runtime.items import Pickled, Variable

    await asyncio.to_thread(remove_stale, Path(directory).expanduser().absolute())
    apart = bool(getattr(runtime, "unpickles_out_of_process", False))
    dump = await asyncio.to_thread(
        read_dump,
        directory,
        trust=trust,
        verify=verify,
        vouch=vouch,
        hold_back=hold_back,
        unpickle=not apart,
    )
    # Pickles first: the kernel may still fail to unpickle one, and nothing else is bound yet.
    order = sorted(dump.values, key=lambda n: not isinstance(dump.values[n], Pickled))
    bound: list[str] = []
    for name in order:
        variable = Variable(name, dump.values[name], dump.descriptions.get(name))
        try:
            await inject_variable(runtime, variable)
        except Exception as exc:  # the kernel could not unpickle it: undo, report
            for done in bound:
                with contextlib.suppress(Exception):
                    await runtime.delete(done)
            raise DataIOError(
                f"dump {dump.directory}: {name} could not be restored ({exc}); nothing was loaded",
                path=dump.directory,
            ) from None
        bound.append(name)
    for module in dump.modules:
        name, target = module["name"], module["module"]
        code = f"import {target}" if name == target else f"import {target} as {name}"
        result = await runtime.execute(code)
        if not result.success:
            reason = (result.error_text or "import failed").strip().splitlines()[-1]
            dump.not_restored.append({"name": name, "reason": reason})
        else:
            dump.names.append(name)
    return dump
