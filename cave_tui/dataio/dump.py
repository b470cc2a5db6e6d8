"""Namespace dumps: every user variable in a folder, with a `manifest.json`.

`dump_namespace` writes a complete new dump into a hidden staging folder and then
puts it in place (swapped with the old one beside it, or committed by its manifest
inside a mount point: dataio/staging.py), so an interrupted dump always leaves the
previous one intact, and the next dump removes what a killed one left.
What is saved comes from the runtime's complete persistence listing (`dataio/plan.py`);
functions and classes the model wrote are kept as their source (`definitions`).
`checkpoint_namespace` (`dataio/checkpoint.py`) updates a dump in place with this writer.
`load_dump` restores either kind, checking every file's size and sha256.
Over 400 lines: the writer and the loader share one manifest format and its
crash-recovery rules, which are easier to keep right side by side.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import contextlib
import errno
import functools
import hashlib
import json
import os
import stat
import threading
import time
from collections.abc import AsyncIterator, Callable, Collection
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar

from cave_tui.dataio.atomic import fsync_many, fsync_path
from cave_tui.dataio.errors import DataIOError, TrustRequiredError, describe_os_error
from cave_tui.dataio.progress import Progress, ProgressCallback
from cave_tui.dataio.save import EXTENSIONS, Unsuitable, candidate_formats, write_in_format
from cave_tui.dataio.staging import (
    MOUNT_FURNITURE,
    Staging,
    disk_full,
    is_dump_machinery,
    is_mount_point,
    remove_stale,
)
from cave_tui.runtime.provenance import DefinitionOrigin, Provenance
from cave_tui.runtime.watched import GRACE, HUNG, TookTooLong, run_watched

if TYPE_CHECKING:  # the manifest schema needs pydantic: imported only when a dump is read
    from cave_tui.dataio.manifest import CheckedFile, Manifest, Restore

T = TypeVar("T")
MANIFEST = "manifest.json"
DUMP_FORMAT = "cave-dump"
DUMP_VERSION = 2  # 2: `definitions` (functions and classes kept as source)
RESAVE_BELOW = 8 << 20  # checkpoints re-save objects under this size even if not reported changed


@dataclass
class DumpResult:
    """What a dump or checkpoint wrote, and what it could not save (with why)."""

    directory: Path
    saved: list[dict[str, Any]] = field(default_factory=list)  # manifest entries
    modules: list[dict[str, str]] = field(default_factory=list)  # {"name": "pd", "module": …}
    skipped: list[dict[str, Any]] = field(default_factory=list)  # {"name", "type", "reason", …}
    definitions: list[dict[str, Any]] = field(default_factory=list)  # {"name", "source", …}
    written: list[str] = field(default_factory=list)  # names (re)written by this call
    given: list[str] = field(default_factory=list)  # of the saved names, those the user gave
    deferred: list[str] = field(default_factory=list)  # not read: over a snapshot's bounds
    seconds: float = 0.0
    marks: dict[str, Any] = field(default_factory=dict)  # more manifest keys (a snapshot's log_seq)
    provenance: Provenance = Provenance.IN_PROCESS  # where the runtime that wrote it runs cells

    @property
    def bytes(self) -> int:
        return sum(int(e["bytes"]) for e in self.saved)

    @property
    def names(self) -> list[str]:
        """The names a restore brings back: variables, then definitions (not modules)."""
        return [e["name"] for e in self.saved] + [d["name"] for d in self.definitions]

    def summary(self, where: str | None = None) -> str:
        """One line for the user; *where*: the folder as the message names it (else absolute)."""
        shown = where or self.directory
        text = f"{len(self.saved)} variables ({self.bytes:,} bytes) in {shown}"
        if self.definitions:
            text += (
                f"; {len(self.definitions)} functions and classes kept as their source: "
                + ", ".join(d["name"] for d in self.definitions[:8])
                + (" …" if len(self.definitions) > 8 else "")
            )
        streamed = [e["name"] for e in self.saved if (e.get("restore") or {}).get("as") == "lazy"]
        if streamed:
            text += "; lazy frames streamed to Parquet, never collected: " + ", ".join(streamed)
        from cave_tui.dataio.plan import SkipCause

        # The host's own tools (activate_skill…) are injected again: not the user's to hear of.
        skipped = [s for s in self.skipped if s.get("cause") != SkipCause.HOST.value]
        if skipped:
            why = (f"{s['name']} ({s['reason']})" for s in skipped)
            text += "; not saved: " + "; ".join(why)
        return text


# -- what to save ------------------------------------------------------------------------
_GONE = object()  # the name was deleted between the listing and its retrieval


@dataclass
class _Refused:
    """The runtime did not hand the value over: it keeps it to itself (`kept`: the kernel
    refuses unsafe types, a TypeError), or it could not be reached (a kernel gone…)."""

    reason: str
    kept: bool = True

    def entry(self, item: Any) -> dict[str, Any]:
        from cave_tui.dataio.plan import SkipCause, skip_entry

        cause = SkipCause.NOT_RETRIEVED
        entry = skip_entry(
            item.name, item.type_name, cause, f"could not be retrieved: {self.reason}"
        )
        if item.digest is not None:
            entry["digest"] = item.digest  # a snapshot does not ask again while it is unchanged
        return entry


async def _retrieve(runtime: Any, item: Any) -> Any:
    """The object bound to *item*'s name, `_GONE`, or `_Refused` with the runtime's reason.

    A value the runtime keeps to itself (the kernel's: an instance of a class a cell wrote)
    comes as the `KernelPickle` the runtime makes of it where it lives, when it can: its
    bytes are written as they are, never unpickled here.
    """
    try:
        return await runtime.retrieve(item.name)
    except KeyError:
        return _GONE
    except Exception as exc:  # e.g. the kernel runtime refuses to send it back
        refused = _Refused(getattr(exc, "detail", None) or str(exc), isinstance(exc, TypeError))
        in_kernel = bool(getattr(exc, "pickle_in_kernel", False))  # it refused to send it
    pickle_it = getattr(runtime, "retrieve_pickled", None)
    if not in_kernel or pickle_it is None:
        return refused
    try:
        return await pickle_it(item.name)
    except KeyError:
        return _GONE
    except Exception as failure:
        return _Refused(f"{refused.reason}; the kernel could not pickle it either: {failure}")


def _is_kernel_pickle(obj: Any) -> bool:
    from cave_tui.runtime.items import Pickled

    return isinstance(getattr(obj, "pickled", None), Pickled)


FETCH_COUNT = 256  # small values asked of the runtime per round trip (`retrieve_many`)
FETCH_BYTES = 8 << 20


def _outcome(exc: Exception | None, value: Any) -> Any:
    """`_retrieve`'s answer for a value or the error retrieving it raised."""
    if exc is None:
        return value
    if isinstance(exc, KeyError):
        return _GONE
    return _Refused(getattr(exc, "detail", None) or str(exc), isinstance(exc, TypeError))


async def _fetch_batch(runtime: Any, items: list[tuple[int, Any]]) -> list[tuple[int, Any, Any]]:
    if not items:
        return []
    try:
        got = await runtime.retrieve_many([item.name for _, item in items])
    except Exception:  # the batch as a whole failed (a kernel gone…): each says why
        return [(key, item, await _retrieve(runtime, item)) for key, item in items]
    out = []
    kept: list[tuple[int, Any, Any]] = []  # refused, to be pickled where they live
    pickle_many = getattr(runtime, "retrieve_pickled_many", None)
    for (key, item), one in zip(items, got, strict=True):
        if getattr(one.error, "pickle_in_kernel", False) and pickle_many is not None:
            kept.append((key, item, _outcome(one.error, None)))
        elif one.error is not None and not isinstance(one.error, KeyError):
            out.append((key, item, await _retrieve(runtime, item)))  # refused: `_retrieve`'s way
        else:
            out.append((key, item, _outcome(one.error, one.value)))
    if kept and pickle_many is not None:  # one round trip for all of them, not two each
        try:
            pickles = await pickle_many([item.name for _, item, _ in kept])
        except Exception as exc:
            pickles = [exc] * len(kept)
        for (key, item, refused), made in zip(kept, pickles, strict=True):
            if isinstance(made, KeyError):
                out.append((key, item, _GONE))
            elif isinstance(made, Exception):
                why = f"{refused.reason}; the kernel could not pickle it either: {made}"
                out.append((key, item, _Refused(why)))
            else:
                out.append((key, item, made))
        out.sort(key=lambda got: got[0])
    return out


async def _retrieve_all(
    runtime: Any, items: list[tuple[int, Any]]
) -> AsyncIterator[tuple[int, Any, Any]]:
    """(key, item, `_retrieve`'s answer) for each of *items*, in order. Values known to be
    small (a digest gave their size) come in batches from a runtime with `retrieve_many`:
    one round trip to a kernel for up to FETCH_COUNT of them, not one each."""
    many = getattr(runtime, "retrieve_many", None) is not None
    pending: list[tuple[int, Any]] = []
    weight = 0
    for key, item in items:
        small = many and item.size is not None and item.size < SMALL_WRITE
        if small:
            pending.append((key, item))
            weight += item.size
            if len(pending) < FETCH_COUNT and weight < FETCH_BYTES:
                continue
        for got in await _fetch_batch(runtime, pending):
            yield got
        pending, weight = [], 0
        if not small:
            yield key, item, await _retrieve(runtime, item)
    for got in await _fetch_batch(runtime, pending):
        yield got


def _not_saved(item: Any, error: str) -> dict[str, Any]:
    from cave_tui.dataio.plan import SkipCause, skip_entry

    return skip_entry(item.name, item.type_name, SkipCause.UNSAVEABLE, f"cannot be saved: {error}")


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
    obj: Any, name: str, folder: Path, stem: str, *, follow: bool = True
) -> tuple[dict[str, Any], _HashFollower | None]:
    """Write *obj* as `folder/stem.<ext>` in the first format that fits; raises Unsuitable.

    With *follow*, a thread hashes the file as it is written (big objects); without, the
    caller hashes the finished file (small ones: a thread each would cost more).
    """
    if _is_kernel_pickle(obj):  # bytes made in the kernel: written as they are
        path = folder / f"{stem}{EXTENSIONS[obj.pickled.format]}"
        path.write_bytes(obj.pickled.data)
        kept = {"name": name, "type": obj.type_name, "module": obj.module}
        kept |= {"format": obj.pickled.format, "file": path.name, "bytes": path.stat().st_size}
        return kept, None
    notes = []
    for fmt in candidate_formats(obj):
        path = folder / f"{stem}{EXTENSIONS[fmt]}"
        follower = None
        if follow:
            with contextlib.suppress(FileNotFoundError):
                path.unlink()  # a leftover of a crashed run must not be hashed
            follower = _HashFollower(path)
            follower.start()
        try:
            restore = write_in_format(obj, path, fmt, checksums=False)  # sha256 covers it
        except Unsuitable as exc:
            if follower is not None:
                follower.abandon.set()
            notes.append(str(exc))
            with contextlib.suppress(OSError):
                path.unlink()
            continue
        except BaseException:
            if follower is not None:
                follower.abandon.set()
            with contextlib.suppress(OSError):
                path.unlink()
            raise
        if follower is not None:
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


SMALL_WRITE = 256 << 10  # objects pickling under this are written in batches on one thread
BATCH_BYTES = 16 << 20
BATCH_COUNT = 512


@dataclass
class _Outcome:
    """One object handed to the writer: its manifest entry, or why no format took it."""

    key: int  # the caller's order
    entry: dict[str, Any] | None
    error: str | None = None
    batched: bool = False  # written in a batch: flushed to disk with the others at the end


def _write_batch(
    batch: list[tuple[int, Any, str, str]],
    folder: Path,
    out: list[_Outcome] | None = None,
    stop: threading.Event | None = None,
) -> list[_Outcome]:
    """Write small objects one after the other, each hashed once it is written; each outcome
    goes into *out* as soon as it is known (what a stopped batch did stays there). Once
    *stop* is set, nothing more is written."""
    out = [] if out is None else out
    for key, obj, name, stem in batch:
        if stop is not None and stop.is_set():
            break
        try:
            entry, _ = _write_entry(obj, name, folder, stem, follow=False)
        except Unsuitable as exc:
            out.append(_Outcome(key, None, str(exc)))
            continue
        data = (folder / entry["file"]).read_bytes()
        entry["sha256"] = hashlib.sha256(data).hexdigest()
        entry["bytes"] = len(data)
        out.append(_Outcome(key, entry, batched=True))
    return out


WRITE_LIMIT = 60.0  # seconds one value's write may go without progress (the kernel's checkpoint)


def write_limit(runtime: Any) -> float:
    """Seconds one value's write may go without progress: `WRITE_LIMIT`, or the runtime's
    cell timeout if shorter (saving what a cell made never waits longer than it could run)."""
    cell = getattr(runtime, "cell_timeout", None)
    return (
        min(WRITE_LIMIT, float(cell)) if isinstance(cell, int | float) and cell > 0 else WRITE_LIMIT
    )


HUNG_BEFORE = (
    "pickling it did not finish in time before (its __getstate__ or __reduce__ may never "
    "return); it is not tried again while it lives"
)


def _too_long(exc: TookTooLong) -> str:
    """Why a value was not saved when its write overran (the manifest's reason)."""
    how = "it was stopped" if exc.stopped else "it is stuck in native code and was abandoned"
    return (
        f"saving it took over {exc.limit:g} s ({how}; its __getstate__ or __reduce__ may "
        "never return); it is not tried again while it lives"
    )


class _Writer:
    """Writes objects: big ones one at a time, hashed and fsynced on a second thread
    meanwhile; small ones in batches on a worker thread, flushed to disk together.

    Every write runs watched (`run_watched`): one that goes *limit* seconds without
    progress is stopped or abandoned, and its value is not saved, with the reason."""

    def __init__(self, folder: Path, sync: bool, limit: float = WRITE_LIMIT) -> None:
        self.folder = folder
        self.sync = sync
        self.limit = limit
        self._pool = concurrent.futures.ThreadPoolExecutor(1, thread_name_prefix="cave-dump")
        self._pending: list[tuple[dict[str, Any], concurrent.futures.Future[str]]] = []
        self._batch: list[tuple[int, Any, str, str]] = []
        self._batch_bytes = 0
        self._outcomes: list[_Outcome] = []
        self._stems: list[str] = []  # every value handed over, written or not yet
        self._stop = threading.Event()  # set by `abort`: a batch writes no more
        self._running: threading.Event | None = None  # set once the current write returned

    @property
    def files(self) -> list[Path]:
        """The files written so far (to remove when the write as a whole fails)."""
        return [self.folder / o.entry["file"] for o in self._outcomes if o.entry is not None]

    def _tracked(self, fn: Callable[[], T]) -> Callable[[], T]:
        """*fn*, noting when it returns (`stop` waits for that)."""
        finished = self._running = threading.Event()

        def run() -> T:
            try:
                return fn()
            finally:
                finished.set()

        return run

    async def add(self, key: int, obj: Any, name: str, stem: str, size: int | None) -> None:
        """Write *obj* (now, or with the next batch when its pickle is *size* < SMALL_WRITE)."""
        self._stems.append(stem)
        if obj in HUNG:
            self._outcomes.append(_Outcome(key, None, HUNG_BEFORE))
            return
        if size is not None and size < SMALL_WRITE:
            self._batch.append((key, obj, name, stem))
            self._batch_bytes += size
            if len(self._batch) >= BATCH_COUNT or self._batch_bytes >= BATCH_BYTES:
                await self._flush()
            return
        if _is_kernel_pickle(obj):  # small or not: hashed from the file, with the batch
            await self._write_batch([(key, obj, name, stem)])
            return
        try:
            entry, follower = await run_watched(
                self._tracked(lambda: _write_entry(obj, name, self.folder, stem)),
                limit=self.limit,
                progress=lambda: self._written(stem),
                name="cave-dump-write",
            )
        except Unsuitable as exc:
            self._outcomes.append(_Outcome(key, None, str(exc)))
            return
        except TookTooLong as exc:
            HUNG.add(obj)
            self._remove(stem)
            self._outcomes.append(_Outcome(key, None, _too_long(exc)))
            return
        assert follower is not None
        path = self.folder / entry["file"]
        self._pending.append((entry, self._pool.submit(_finish_file, path, follower, self.sync)))
        self._outcomes.append(_Outcome(key, entry))

    def _paths(self, stem: str) -> list[Path]:
        """Every file a value saved as *stem* may be written to (one per format)."""
        return [self.folder / f"{stem}{ext}" for ext in sorted(set(EXTENSIONS.values()))]

    def _written(self, stem: str) -> int:
        """Bytes written so far of the value saved as *stem* (its progress)."""
        total = 0
        for path in self._paths(stem):
            with contextlib.suppress(OSError):
                total += path.stat().st_size
        return total

    def _remove(self, stem: str) -> None:
        for path in self._paths(stem):
            with contextlib.suppress(OSError):
                path.unlink()

    async def _write_batch(self, batch: list[tuple[int, Any, str, str]]) -> None:
        """Write *batch* watched; a value whose write overran is left out (not saved, with
        the reason) and the rest of the batch is written after it."""
        while batch:
            out: list[_Outcome] = []
            stop = self._stop = threading.Event()  # an abandoned batch that wakes writes no more
            try:
                await run_watched(
                    self._tracked(functools.partial(_write_batch, batch, self.folder, out, stop)),
                    limit=self.limit,
                    progress=out.__len__,
                    name="cave-dump-batch",
                )
            except TookTooLong as exc:
                stop.set()
                out = out[:]
                key, obj, _, stem = batch[len(out)]
                HUNG.add(obj)
                self._remove(stem)
                out.append(_Outcome(key, None, _too_long(exc)))
            self._outcomes.extend(out)
            batch = batch[len(out) :]

    async def _flush(self) -> None:
        batch, self._batch, self._batch_bytes = self._batch, [], 0
        if batch:
            await self._write_batch(batch)

    async def finish(self) -> list[_Outcome]:
        """Every outcome, in the callers' order, once all files are hashed and on disk."""
        try:
            await self._flush()
            for entry, fut in self._pending:
                entry["sha256"] = await asyncio.wrap_future(fut)
            if self.sync:
                small = [o.entry["file"] for o in self._outcomes if o.entry and o.batched]
                await asyncio.to_thread(fsync_many, [self.folder / f for f in small])
        finally:
            self._pool.shutdown(wait=True)
        return sorted(self._outcomes, key=lambda o: o.key)

    def abort(self) -> None:
        """Stop after a failure: no new work; the caller removes `files`."""
        self._stop.set()
        self._pool.shutdown(wait=False, cancel_futures=True)

    async def discard(self, grace: float = GRACE) -> None:
        """Stop (`abort`), give the write under way up to *grace* seconds to return (it was
        interrupted), and remove every file of every value handed over: a cancelled
        snapshot leaves nothing of itself (what a write stuck longer leaves, the next
        snapshot removes)."""
        self.abort()
        running = self._running
        if running is not None and not running.is_set():
            await asyncio.to_thread(running.wait, grace)
        for stem in self._stems:
            self._remove(stem)


def _manifest(result: DumpResult) -> str:
    from cave_tui import __version__

    data = {
        "format": DUMP_FORMAT,
        "version": DUMP_VERSION,
        "created": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
        "cave_version": __version__,
        "provenance": result.provenance.value,
        "variables": result.saved,
        "modules": result.modules,
        "definitions": result.definitions,
        "skipped": result.skipped,
        "given": sorted(result.given),
        **result.marks,
    }
    return json.dumps(data, indent=1, ensure_ascii=False, default=str)


def given_of(runtime: Any, saved: list[dict[str, Any]]) -> list[str]:
    """The saved names the user gave (`Runtime.given_names`), for the manifest's `given`:
    a restore marks the others as the model's, so they are not taken for the user's."""
    names = getattr(runtime, "given_names", None)
    given = names() if callable(names) else set()
    return sorted(given & {str(e["name"]) for e in saved})


# -- full dumps, staged then put in place (dataio/staging.py) ----------------------------
@dataclass(frozen=True)
class TargetContents:
    """What a dump target holds: the files its previous dump's manifest lists (the only
    ones a new dump removes) and the entries that are not a dump's (a user's: kept)."""

    listed: frozenset[str] = frozenset()
    others: tuple[str, ...] = ()
    dump: bool = False  # holds a valid cave-dump manifest
    problem: str = ""  # why its manifest.json is not a cave dump's


def _place_problem(target: Path, sessions: Path | None) -> str | None:
    """Why no dump may write at *target* whatever it holds (the current folder, a folder
    holding it, the sessions folder, a folder holding it or inside it), or None."""
    real = Path(os.path.realpath(target))
    with contextlib.suppress(OSError):
        cwd = Path(os.path.realpath(os.getcwd()))
        if real == cwd:
            return "it is the current folder"
        if cwd.is_relative_to(real):
            return f"it holds the current folder ({cwd})"
    if sessions is not None:
        home = Path(os.path.realpath(Path(sessions).expanduser().absolute()))
        if real == home:
            return "it is the sessions folder"
        if home.is_relative_to(real):
            return f"it holds the sessions folder ({home})"
        if real.is_relative_to(home):
            return f"it is inside the sessions folder ({home}), where sessions are recorded"
    return None


def survey_target(target: Path) -> TargetContents:
    """What the folder *target* holds, sorted into its previous dump's files and the rest."""
    try:
        names = sorted(os.listdir(target))
    except (FileNotFoundError, NotADirectoryError):
        return TargetContents()
    mount_root = bool(set(names) & MOUNT_FURNITURE) and is_mount_point(target)
    names = [n for n in names if not is_dump_machinery(n)]
    names = [n for n in names if not (mount_root and n in MOUNT_FURNITURE)]
    if MANIFEST not in names:
        return TargetContents(others=tuple(names))
    try:  # read as a bounded regular file: a link, a FIFO or a huge file is refused
        manifest, _ = _valid_manifest(target)
    except (DataIOError, OSError) as exc:
        detail = str(exc).splitlines()[0]
        problem = f"its {MANIFEST} is not a cave dump's"
        if "is not a cave dump manifest" not in detail:
            problem += f" ({detail})"
        return TargetContents(others=tuple(names), problem=problem)
    listed = set()
    for entry in manifest.variables:  # only files of the very size the manifest says
        with contextlib.suppress(OSError):
            info = os.lstat(target / entry.file)
            if stat.S_ISREG(info.st_mode) and info.st_size == entry.bytes:
                listed.add(entry.file)
    others = tuple(n for n in names if n != MANIFEST and n not in listed)
    return TargetContents(frozenset(listed), others, dump=True)


def named_entries(names: Collection[str], limit: int = 6) -> str:
    shown = ", ".join(repr(n) for n in list(names)[:limit])
    return shown + (f" and {len(names) - limit} more" if len(names) > limit else "")


def check_dump_target(target: Path, *, sessions: Path | None = None) -> TargetContents:
    """What *target* holds, if a dump may write there; else `DataIOError` saying why.

    A dump writes only into a new folder, an empty one, or a cave dump (a valid cave-dump
    manifest; files it does not list are kept). Never into a file, the current folder or
    a folder holding it, or the *sessions* folder, a folder holding it or one inside it.
    """
    problem = _place_problem(target, sessions)
    if problem is not None:
        raise DataIOError(
            f"cannot dump into {target}: {problem}; choose another folder (nothing was written)",
            path=target,
        )
    if target.exists() and not target.is_dir():
        raise DataIOError(f"cannot dump into {target}: it is a file, not a folder", path=target)
    contents = survey_target(target)
    if contents.others and not contents.dump:
        why = f"{contents.problem}; " if contents.problem else ""
        raise DataIOError(
            f"cannot dump into {target}: the folder holds other files and is not a cave dump "
            f"({why}{named_entries(contents.others)}); a dump writes only into a new or empty "
            "folder or a previous dump: choose another folder (nothing was written)",
            path=target,
        )
    return contents


async def dump_namespace(
    runtime: Any,
    directory: str | Path,
    *,
    sync: bool = True,
    progress: ProgressCallback | None = None,
    sessions: Path | None = None,
) -> DumpResult:
    """Write every user variable of *runtime* to *directory* with a manifest.

    Objects that cannot be saved (modules, unpicklable objects, host-injected
    functions) are listed in the manifest's `skipped` with the reason. The previous
    dump in *directory* stays intact until the new one is complete; only the files its
    manifest listed are removed. A target `check_dump_target` refuses (given *sessions*,
    the sessions folder) raises `DataIOError` before anything is written; another dump
    into it under way raises `DumpBusyError`.
    """
    from cave_tui.dataio.dump_lock import dump_lock

    target = Path(os.path.normpath(Path(directory).expanduser().absolute()))
    problem = _place_problem(target, sessions)
    if problem is not None:  # before the lock file beside it is made
        check_dump_target(target, sessions=sessions)
    try:
        with dump_lock(target):
            return await _dump_locked(runtime, target, sync, progress, sessions)
    except OSError as exc:  # the lock file could not be made
        raise DataIOError(describe_os_error(exc, "write", target), path=target) from None


async def _dump_locked(
    runtime: Any,
    target: Path,
    sync: bool,
    progress: ProgressCallback | None,
    sessions: Path | None,
) -> DumpResult:
    started = time.perf_counter()
    remove_stale(target)  # what killed dumps left (never a dump still being written)
    previous = check_dump_target(target, sessions=sessions)
    try:
        staging = Staging.create(target)
    except OSError as exc:
        raise DataIOError(describe_os_error(exc, "write", target), path=target) from None
    result = DumpResult(target)
    writer = _Writer(staging.path, sync, write_limit(runtime))
    try:
        from cave_tui.dataio.plan import plan_dump

        plan = await plan_dump(runtime, RESAVE_BELOW, stream=True)
        result.modules, result.skipped = plan.modules, plan.skipped
        result.definitions, result.provenance = plan.definitions, plan.provenance
        used: set[str] = set()
        async for i, item, obj in _retrieve_all(runtime, list(enumerate(plan.values))):
            if progress is not None:
                progress(Progress(i, len(plan.values), "variables", "writing", str(target)))
            if isinstance(obj, _Refused):
                result.skipped.append(obj.entry(item))
            elif obj is not _GONE:
                await writer.add(i, obj, item.name, _unique_stem(item.name, used), item.size)
            del obj
        for item in plan.streams:  # lazy frames: streamed where they live, never collected
            entry = await _stream_entry(runtime, item, staging.path, _unique_stem(item.name, used))
            if "reason" in entry:
                result.skipped.append(entry)
            else:
                result.saved.append(_described(entry, item, plan.descriptions))
                result.written.append(item.name)
        for outcome in await writer.finish():
            item = plan.values[outcome.key]
            if outcome.entry is None:
                result.skipped.append(_not_saved(item, outcome.error or "no format fits"))
                continue
            entry = _described(outcome.entry, item, plan.descriptions)
            result.saved.append(entry)
            result.written.append(item.name)
        result.given = given_of(runtime, result.saved)
        staging.commit(result.saved, lambda: _manifest(result), sync=sync, listed=previous.listed)
    except OSError as exc:
        writer.abort()
        if exc.errno is None and disk_full(staging.path):  # numpy's short writes carry no errno
            exc = OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))
        staging.discard()
        raise DataIOError(
            describe_os_error(exc, "write", target) + "; the previous dump is intact", path=target
        ) from None
    except BaseException:
        writer.abort()
        await asyncio.shield(asyncio.to_thread(staging.discard))
        raise
    remove_stale(target)  # copies a finished swap left beside the target
    result.seconds = time.perf_counter() - started
    return result


async def _stream_entry(runtime: Any, item: Any, folder: Path, stem: str) -> dict[str, Any]:
    """*item*'s lazy frame streamed to `folder/stem.parquet` by the runtime (where it lives,
    never collected): its manifest entry, restored as a lazy scan of that file; or, when it
    could not be streamed, its `skipped` entry with the reason."""
    from cave_tui.dataio.load import file_sha256
    from cave_tui.dataio.plan import SkipCause, skip_entry
    from cave_tui.runtime.shipped.lazy import PARQUET_SUFFIX, StreamError, scan_engine_of

    path = folder / f"{stem}{PARQUET_SUFFIX}"
    try:
        done = await runtime.stream_parquet(item.name, str(path))
        if done is None:
            raise StreamError("it no longer holds a lazy frame")
        sha = await asyncio.to_thread(file_sha256, path)  # read a block at a time
    except (KeyError, FileExistsError, StreamError, OSError, DataIOError) as exc:
        with contextlib.suppress(OSError):
            path.unlink()
        why = f"not streamed to Parquet: {exc}"
        return skip_entry(item.name, item.type_name, SkipCause.UNSAVEABLE, why)
    engine = scan_engine_of(done.type_name)
    return {
        "name": item.name,
        "type": done.type_name,
        "module": engine.value,
        "format": "parquet",
        "file": path.name,
        "bytes": done.bytes,
        "sha256": sha,
        "restore": {"as": "lazy", "name": engine.value},
        "rows": done.rows,
    }


def _described(entry: dict[str, Any], item: Any, descriptions: dict[str, str]) -> dict[str, Any]:
    """The manifest entry with what tells the next snapshot whether it changed."""
    if descriptions.get(item.name):
        entry["description"] = descriptions[item.name]
    if item.digest is not None:
        entry["digest"] = item.digest
    return entry


def _unique_stem(name: str, used: set[str]) -> str:
    """File stems unique even on case-insensitive file systems."""
    stem = name
    n = 2
    while stem.lower() in used:
        stem = f"{name}-{n}"
        n += 1
    used.add(stem.lower())
    return stem


# -- reading dumps back ---------------------------------------------------------------------
def _read_manifest_file(folder: Path) -> dict[str, Any]:
    from cave_tui.dataio.bounded_read import MANIFEST_LIMIT, read_regular

    path = folder / MANIFEST
    try:
        data = json.loads(read_regular(path, MANIFEST_LIMIT).decode("utf-8"))
    except FileNotFoundError:
        raise DataIOError(f"{folder} is not a cave dump (no {MANIFEST})", path=folder) from None
    except OSError as exc:
        raise DataIOError(f"cannot read {path}: {exc.strerror or exc}", path=path) from None
    except (json.JSONDecodeError, UnicodeDecodeError, RecursionError) as exc:
        raise DataIOError(f"{path} is corrupt ({exc})", path=path) from None
    if not isinstance(data, dict) or data.get("format") != DUMP_FORMAT:
        raise DataIOError(f"{path} is not a cave dump manifest", path=path)
    if int(data.get("version", 0)) > DUMP_VERSION:
        raise DataIOError(f"{path} was written by a newer cave (dump v{data['version']})")
    data.setdefault("variables", [])
    data.setdefault("skipped", [])
    data.setdefault("modules", [])
    data.setdefault("definitions", [])
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
NOT_TRUSTED_CODE = "a function or class whose source was not trusted to run here"


@dataclass
class LoadedDump:
    directory: Path
    names: list[str]
    skipped: list[dict[str, Any]]  # what the dump itself could not save
    values: dict[str, Any] = field(default_factory=dict, repr=False)
    modules: list[dict[str, str]] = field(default_factory=list)  # imports to redo
    not_restored: list[dict[str, str]] = field(default_factory=list)  # {"name", "reason"}
    held: list[dict[str, Any]] = field(default_factory=list)  # entries left out: not trusted
    # (variables' entries, and definitions' marked `reported`: kept only for --trust)
    descriptions: dict[str, str] = field(default_factory=dict)
    definitions: list[dict[str, str]] = field(default_factory=list)  # {"name", "source"} to run
    given: set[str] | None = None  # the names the user gave; None: a dump that does not say
    marks: dict[str, Any] = field(default_factory=dict)  # manifest keys the schema does not know

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


def check_dump(
    directory: str | Path,
    *,
    vouch: Vouch | None = None,
    partial: bool = False,
    into: Provenance = Provenance.IN_PROCESS,
) -> list[str]:
    """Check the dump at *directory* without loading it (the manifest, and each file's
    presence and size); returns the names that would need trust to load into a runtime
    running as *into*. Raises like `read_dump` (with *partial*, a bad file is not an
    error: `read_dump` leaves its variable out)."""
    from cave_tui.dataio.manifest import check_files

    folder = resolve_dump_dir(directory)
    manifest, raw = _valid_manifest(folder)
    if not partial:
        check_files(manifest, folder)
    trusted = vouch(raw, manifest.names()) if vouch is not None else ()
    return manifest.untrusted(folder, trusted, into)


def _trust_message(folder: Path, manifest: Manifest, untrusted: set[str], into: Provenance) -> str:
    from cave_tui.dataio.module_trust import module_source

    pickled = [e.name for e in manifest.variables if e.name in untrusted]
    defined = [d.name for d in manifest.definitions if d.name in untrusted]
    modules = [
        f"{m.name} = {m.module}, {module_source(m.module, [folder]).value}"
        for m in manifest.modules
        if m.name in untrusted
    ]
    parts = []
    if pickled:
        parts.append(f"holds pickled objects ({', '.join(pickled)}), which run code when loaded")
    if defined:
        parts.append(f"holds functions and classes ({', '.join(defined)}) to run again")
    if modules:
        parts.append(f"imports modules that are not installed packages ({'; '.join(modules)})")
    return (
        f"the dump {folder} " + " and ".join(parts) + f"; {_where_from(manifest, into)}; "
        "load it only if you trust it (confirm, or pass --trust)"
    )


def _where_from(manifest: Manifest, into: Provenance) -> str:
    """Why the dump's code is not trusted here: where it was written, or who wrote it."""
    if manifest.provenance is None:
        where = "it does not say where it was written (an older cave, or not cave)"
    else:
        where = f"it was written by {manifest.written_by.label}"
    if manifest.written_by.escapes_into(into):
        return f"{where}, and would run in {into.label}, which is less confined"
    if any(d.reported for d in manifest.definitions):
        return f"{where}; some of its code is not a cell cave sent (only the runtime's word)"
    return where


def _lazy(checked: CheckedFile) -> bool:
    """Whether the entry is a streamed lazy frame (bound as a scan: nothing read into memory)."""
    return checked.entry.restore is not None and checked.entry.restore.as_ == "lazy"


def _load_safe(checked: CheckedFile, verify: bool) -> tuple[Any, str | None]:
    """A file in a format that runs no code, and why its sha256 does not match (or None)."""
    from cave_tui.dataio.load import load_file
    from cave_tui.dataio.verified import sha256_problem

    entry, path = checked.entry, checked.path
    if entry.restore is not None and entry.restore.as_ == "lazy":  # never read whole
        from cave_tui.dataio.load import file_sha256

        digest = file_sha256(path) if verify else None
        problem = sha256_problem(checked, digest) if digest else None
        return _restore(None, entry.restore, path), problem
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
    room_of: object = None,
    partial: bool = False,
    into: Provenance = Provenance.IN_PROCESS,
    progress: ProgressCallback | None = None,
) -> LoadedDump:
    """Load every object of a dump (blocking). Nothing is returned unless all load, or,
    with *partial* (a session's own snapshot), a variable whose file is missing, corrupt
    or unreadable is left out, named in `not_restored` with why, and the rest load.
    With *room_of* (a runtime) the entries are sized together from their metadata against
    its memory limit before any is decoded (`NotEnoughMemoryError`).

    The manifest and every file are checked first (a `ManifestError` lists every
    problem). Pickles, definitions whose source the host never sent, and modules that
    are not installed packages need *trust*, or their name among those *vouch* returns for
    the manifest's bytes (a session's seal); loading into a runtime less confined than the
    one that wrote the dump (*into*: the target's `Provenance`), every pickle and
    definition needs *trust*, whatever vouches for it:
    without it a `TrustRequiredError` names them, or, with *hold_back*, they are left
    out (`held`, `not_restored`). Every pickle is hashed and compared with the manifest
    before a byte of any is unpickled (always; *verify* covers the other formats); with
    *unpickle* False the verified bytes come back as `Pickled`, for a runtime that
    unpickles them in its own process. *progress* gets the variables read so far.
    """
    from cave_tui.dataio.manifest import ManifestError, check_each_file
    from cave_tui.dataio.module_trust import ModuleSource, module_source
    from cave_tui.dataio.sizing import check_room, estimate_file, total
    from cave_tui.dataio.verified import read_verified, sha256_problem
    from cave_tui.dataio.verified import unpickle as unpickle_bytes
    from cave_tui.runtime.items import Pickled

    folder = resolve_dump_dir(directory)
    manifest, raw = _valid_manifest(folder)
    checked, bad = check_each_file(manifest, folder)
    if bad and not partial:
        raise ManifestError(folder, [b.problem for b in bad])
    left_out = [{"name": b.entry.name, "reason": b.problem} for b in bad]

    def leave_out(item: CheckedFile, problem: str) -> None:
        left_out.append({"name": item.entry.name, "reason": problem})
        checked.remove(item)

    trusted = vouch(raw, manifest.names()) if vouch is not None and not trust else ()
    untrusted = set() if trust else set(manifest.untrusted(folder, trusted, into))
    if untrusted and not hold_back:
        message = _trust_message(folder, manifest, untrusted, into)
        raise TrustRequiredError(message, path=folder)
    problems = []
    for item in [c for c in checked if c.entry.runs_code]:
        problem = sha256_problem(item)
        if problem is not None and partial:
            leave_out(item, problem)
        elif problem is not None:
            problems.append(problem)
    if problems:  # before a byte of any pickle is unpickled
        raise ManifestError(folder, problems)
    risky = [c for c in checked if c.entry.runs_code]
    dump = LoadedDump(
        folder,
        [],
        [s.model_dump(exclude_none=True) for s in manifest.skipped],
        descriptions={e.name: e.description for e in manifest.variables if e.description},
        given=None if manifest.given is None else set(manifest.given),
        marks=dict(manifest.model_extra or {}),
    )
    if room_of is not None:
        sizes = (
            estimate_file(c.path, c.entry.format)
            for c in checked
            if c.entry.name not in untrusted and not _lazy(c)
        )
        check_room(room_of, total(sizes, "from its files' metadata"), f"the dump {folder}")
    values: dict[str, Any] = {}
    for i, item in enumerate(list(checked)):
        if progress is not None:
            progress(Progress(i, len(checked), "variables", "reading", str(folder)))
        entry = item.entry
        if entry.name in untrusted:
            dump.held.append(entry.model_dump(by_alias=True, exclude_none=True))
            dump.not_restored.append({"name": entry.name, "reason": NOT_TRUSTED})
        elif not entry.runs_code:
            try:
                value, problem = _load_safe(item, verify)
            except DataIOError as exc:
                if not partial:
                    raise
                leave_out(item, str(exc))
                continue
            if problem is not None and partial:
                leave_out(item, problem)
            elif problem is not None:
                problems.append(problem)
            else:
                values[entry.name] = value
    if problems:
        raise ManifestError(folder, problems)
    for item in risky:
        entry = item.entry
        if entry.name not in untrusted:
            try:
                data = read_verified(item)
                if unpickle:
                    values[entry.name] = unpickle_bytes(data, entry.format, item.path)
                else:
                    values[entry.name] = Pickled(data, entry.format)
            except DataIOError as exc:
                if not partial:
                    raise
                left_out.append({"name": entry.name, "reason": str(exc)})
    dump.not_restored.extend(left_out)
    dump.values = {e.name: values[e.name] for e in manifest.variables if e.name in values}
    dump.names = list(dump.values)
    for definition in manifest.definitions:
        if definition.name in untrusted:
            reason = f"{NOT_TRUSTED_CODE} ({_where_from(manifest, into)}); kept for --trust"
            dump.not_restored.append({"name": definition.name, "reason": reason})
            kept = definition.model_dump(exclude_none=True)  # held, as code not trusted here
            dump.held.append(kept | {"origin": DefinitionOrigin.REPORTED.value})
        else:
            dump.definitions.append({"name": definition.name, "source": definition.source})
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
    if kind == "lazy":  # a streamed lazy frame: scanned again where the runtime runs cells
        from cave_tui.runtime.items import LazyScan

        return LazyScan(str(path), "parquet", str(restore.name if restore else "polars"))
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
    partial: bool = False,
    progress: ProgressCallback | None = None,
) -> LoadedDump:
    """Restore a dump into *runtime* (replacing same-named variables). All or nothing, or
    with *partial* every variable that can be restored (see `read_dump`; a value the
    runtime cannot take is left out too, named in `not_restored`).

    Everything is checked and read (`read_dump`, same options) before the first value
    is injected. A runtime that unpickles in its own process (the kernel runtime) gets
    the verified pickle bytes, so code in a trusted pickle runs there, not in the host.
    Staging folders that killed dumps left beside (or in) *directory* are removed first.
    The definitions (functions and classes kept as source) are run again last, inside the
    runtime under its security checker; what the dump did not save is named in `not_restored`.
    Reading the files reports to *progress*.
    """
    from cave_tui.dataio.definitions import restore_definitions
    from cave_tui.dataio.dump_lock import remove_stale_lock
    from cave_tui.dataio.inject import inject_variable
    from cave_tui.dataio.plan import unsaved
    from cave_tui.runtime.items import LazyScan, Pickled, Variable
    from cave_tui.runtime.provenance import provenance_of
    from cave_tui.runtime.shipped.lazy import ScanEngine, scan

    await asyncio.to_thread(remove_stale, Path(directory).expanduser().absolute())
    await asyncio.to_thread(remove_stale_lock, Path(directory).expanduser().absolute())
    apart = bool(getattr(runtime, "unpickles_out_of_process", False))
    dump = await asyncio.to_thread(
        read_dump,
        directory,
        trust=trust,
        verify=verify,
        vouch=vouch,
        hold_back=hold_back,
        unpickle=not apart,
        room_of=runtime,
        partial=partial,
        into=provenance_of(runtime),
        progress=progress,
    )
    # Pickles first: the kernel may still fail to unpickle one, and nothing else is bound yet.
    order = sorted(dump.values, key=lambda n: not isinstance(dump.values[n], Pickled))
    variables = []
    for name in order:
        value = dump.values[name]
        if isinstance(value, LazyScan) and not getattr(runtime, "isolated", False):
            engine = ScanEngine(value.engine)
            value = await asyncio.to_thread(scan, value.path, value.format, engine)
        variable = Variable(name, value, dump.descriptions.get(name))
        variable.made_by_model = dump.given is not None and name not in dump.given
        variables.append(variable)
    bound: list[str] = []
    inject_many = getattr(runtime, "ainject_many", None)
    pickles = [v for v in variables if isinstance(v.value, Pickled)]
    rest = variables[len(pickles) :]
    groups = [[v] for v in pickles] if inject_many is not None else [[v] for v in variables]
    if inject_many is not None and rest:
        groups.append(rest)  # the runtime sends them in bounded messages, many at a time
    for group in groups:
        if inject_many is None or len(group) == 1:  # a pickle alone: unpickled once
            try:
                await inject_variable(runtime, group[0])
                errors: list[Exception | None] = [None]
            except Exception as exc:
                errors = [exc]
        else:
            try:
                errors = await inject_many(group)
            except Exception as exc:  # the kernel went away mid-way: undo the whole group too
                bound += [v.name for v in group]
                errors = [exc] * len(group)
        bound += [v.name for v, error in zip(group, errors, strict=True) if error is None]
        if partial:  # a session's own snapshot: what could not be restored is named
            for variable, error in zip(group, errors, strict=True):
                if error is not None:
                    reason = f"could not be restored ({error})"
                    dump.not_restored.append({"name": variable.name, "reason": reason})
                    del dump.values[variable.name]
                    dump.names.remove(variable.name)
            continue
        failed = next(((v, e) for v, e in zip(group, errors, strict=True) if e is not None), None)
        if failed is not None:  # the kernel could not unpickle it (or build it): undo, report
            for done in bound:
                with contextlib.suppress(Exception):
                    await runtime.delete(done)
            raise DataIOError(
                f"dump {dump.directory}: {failed[0].name} could not be restored ({failed[1]}); "
                "nothing was loaded",
                path=dump.directory,
            ) from None
    for module in dump.modules:
        name, target = module["name"], module["module"]
        code = f"import {target}" if name == target else f"import {target} as {name}"
        result = await runtime.execute(code)
        if not result.success:
            reason = (result.error_text or "import failed").strip().splitlines()[-1]
            dump.not_restored.append({"name": name, "reason": reason})
        else:
            dump.names.append(name)
    await restore_definitions(runtime, dump)  # after the values: they may use them
    dump.not_restored.extend(unsaved(dump.skipped))
    return dump
