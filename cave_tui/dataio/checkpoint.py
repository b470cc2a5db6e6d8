"""Incremental checkpoints (session snapshots): a dump updated in place, writing only what changed.

A value is rewritten when its content changed: values whose pickle is under `resave_below`
bytes carry a digest of those bytes (computed where they live, in one listing), so an
in-place mutation the runtime did not report is still caught, and an unchanged value costs
no write at all; bigger values are rewritten when the runtime reports them changed. New
files get new names and the manifest, replaced atomically last, is the commit point.
A `SnapshotBounds` caps the values one snapshot reads (names and bytes); the rest are
`deferred`: listed in the manifest (skipped as DEFERRED, or under `behind` when an older
value stands) and read first by the next snapshot.
"""

from __future__ import annotations

import asyncio
import contextlib
import errno
import re
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cave_tui.dataio.atomic import atomic_write_text
from cave_tui.dataio.dump import (
    _GONE,
    MANIFEST,
    RESAVE_BELOW,
    DumpResult,
    _described,
    _manifest,
    _not_saved,
    _read_manifest_file,
    _Refused,
    _retrieve_all,
    _Writer,
    given_of,
    write_limit,
)
from cave_tui.dataio.errors import DataIOError, describe_os_error
from cave_tui.dataio.save import EXTENSIONS
from cave_tui.runtime.provenance import DefinitionOrigin

STEP_DIGEST_BELOW = 1 << 20  # after a step: digests of the small values only (cheap)
SNAPSHOT_NAMES = 1000  # values one per-step snapshot reads at most (the rest: the next one)
SNAPSHOT_BYTES = 128 << 20  # bytes of values one per-step snapshot reads at most
BEHIND = "behind"  # manifest key: [{"name", "reason"}], an older value stands for a newer one


@dataclass(frozen=True)
class SnapshotBounds:
    """How much one snapshot reads: at most `names` values and `bytes` of them (None: no
    bound). A value of unknown size counts as `STEP_DIGEST_BELOW`; one value always fits."""

    names: int | None = SNAPSHOT_NAMES
    bytes: int | None = SNAPSHOT_BYTES

    def admits(self, count: int, weight: int, size: int) -> bool:
        """Whether one more value of *size* fits after *count* values of *weight* bytes."""
        if count == 0:
            return True
        if self.names is not None and count >= self.names:
            return False
        return self.bytes is None or weight + size <= self.bytes

    def describe(self) -> str:
        parts = [f"{self.names:,} names" if self.names is not None else ""]
        parts.append(f"{self.bytes / (1 << 20):,.0f} MiB" if self.bytes is not None else "")
        return " and ".join(p for p in parts if p) or "none"


UNBOUNDED = SnapshotBounds(None, None)
# What `_Writer` names a snapshot's file (`df.3.parquet`): one a killed snapshot left is removed.
_SNAPSHOT_FILE = re.compile(
    r"^[^\W\d]\w*\.[0-9]+(?:"
    + "|".join(sorted({re.escape(ext) for ext in EXTENSIONS.values()}))
    + r")$"
)


def _unchanged(item: Any, prev: dict[str, Any], changed: set[str] | None, folder: Path) -> bool:
    """Whether the file of *prev* (still there) holds *item*'s value.

    A digest decides when the value has one (equal pickles, equal content; a reported
    change with the same bytes costs nothing). Without one (a value over the digest
    limit), it is unchanged unless the runtime reported it changed.
    """
    if item.digest is not None:
        same = prev.get("digest") == item.digest
    else:
        same = changed is not None and item.name not in changed
    return same and (folder / prev["file"]).exists()


def _refused_again(item: Any, last: dict[str, Any], changed: set[str] | None) -> bool:
    """A value the runtime refused to hand over last time, unchanged since: not asked again."""
    if item.digest is not None:
        return bool(last.get("digest") == item.digest)
    return changed is not None and item.name not in changed and last.get("type") == item.type_name


def _carried(
    carry: Iterable[dict[str, Any]], plan: Any, result: DumpResult, folder: Path
) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The *carry* entries whose names nothing in the namespace holds now: variables whose
    files are still there, and definitions (kept as `reported`: they need trust to run)."""
    bound = {v.name for v in plan.values} | {m["name"] for m in result.modules}
    bound |= {d["name"] for d in result.definitions} | {s["name"] for s in result.skipped}
    free = [e for e in carry if e["name"] not in bound]
    files = [e for e in free if "file" in e and (folder / e["file"]).is_file()]
    reported = DefinitionOrigin.REPORTED.value
    sources = [e | {"origin": reported} for e in free if "file" not in e and "source" in e]
    return files, sources


def _deferred_names(manifest: dict[str, Any]) -> set[str]:
    """The names a snapshot's *manifest* left for the next one (not read, or behind)."""
    from cave_tui.dataio.plan import SkipCause

    names = {
        str(s.get("name"))
        for s in manifest.get("skipped", [])
        if s.get("cause") == SkipCause.DEFERRED.value
    }
    return names | {str(b.get("name")) for b in manifest.get(BEHIND) or [] if isinstance(b, dict)}


def _within(
    items: list[tuple[int, Any]], bounds: SnapshotBounds, first: set[str]
) -> tuple[list[tuple[int, Any]], list[tuple[int, Any]]]:
    """*items* split into those *bounds* admit and those deferred; names in *first*
    (deferred last time) are admitted first, so nothing waits forever."""
    ordered = sorted(items, key=lambda pair: pair[1].name not in first)
    taken: list[tuple[int, Any]] = []
    deferred: list[tuple[int, Any]] = []
    weight = 0
    for pair in ordered:
        size = pair[1].size if pair[1].size is not None else STEP_DIGEST_BELOW
        if not deferred and bounds.admits(len(taken), weight, size):
            taken.append(pair)
            weight += size
        else:
            deferred.append(pair)
    taken.sort(key=lambda pair: pair[0])
    return taken, deferred


async def checkpoint_namespace(
    runtime: Any,
    directory: str | Path,
    *,
    changed: Iterable[str] | None = None,
    resave_below: int = RESAVE_BELOW,
    sync: bool = True,
    carry: Iterable[dict[str, Any]] = (),
    marks: dict[str, Any] | None = None,
    bounds: SnapshotBounds = UNBOUNDED,
    trust_reports: bool = False,
    late_marks: Callable[[], dict[str, Any]] | None = None,
    parents: bool = True,
) -> DumpResult:
    """Bring the dump in *directory* up to date with the namespace, writing only what changed.

    *changed* names what the runtime reported changed (None: anything may have changed);
    values under *resave_below* bytes are compared by content instead (see `_unchanged`).
    *carry* entries (pickles and definitions a resume was not trusted to load) stay
    listed, with their files, while their names are not bound again. A crash leaves the
    previous checkpoint complete. *marks* are written into the manifest too (a session
    snapshot's `log_seq`), and *late_marks*(), asked once every value is read (its `read_seq`).
    At most *bounds* of values are read; the others are in `result.deferred` (values
    deferred by the last snapshot go first), each listed in the manifest with why.
    With *trust_reports* (and *changed* given), a value the snapshot holds that was not
    reported changed is not looked at, not even digested: a step's snapshot costs what
    the step changed (an unreported in-place change waits for the next one without it).
    Without *parents*, a *directory* whose parent is gone is not re-created (FileNotFoundError).
    """
    from cave_tui.dataio.plan import SkipCause, plan_dump, skip_entry

    started = time.perf_counter()
    folder = Path(directory).expanduser().absolute()
    if not parents and not folder.parent.is_dir():
        raise FileNotFoundError(errno.ENOENT, "the folder is gone", str(folder.parent))
    try:
        folder.mkdir(parents=parents, exist_ok=True)
    except OSError as exc:
        raise DataIOError(describe_os_error(exc, "write", folder), path=folder) from None
    previous = _read_manifest_file(folder) if (folder / MANIFEST).exists() else {}
    old = {e["name"]: e for e in previous.get("variables", [])}
    old_sources = {d["name"]: d.get("digest") for d in previous.get("definitions", [])}
    refused = {
        s["name"]: s
        for s in previous.get("skipped", [])
        if s.get("cause") == SkipCause.NOT_RETRIEVED.value
    }
    changed_set = None if changed is None else set(changed)
    skip: set[str] = set()
    if trust_reports and changed_set is not None:
        skip = set(old) - changed_set - _deferred_names(previous)
    plan = await plan_dump(runtime, resave_below, skip)
    result = DumpResult(folder, modules=plan.modules, skipped=plan.skipped, marks=dict(marks or {}))
    result.definitions, result.provenance = plan.definitions, plan.provenance
    writer = _Writer(folder, sync, write_limit(runtime))
    entries: dict[str, dict[str, Any]] = {}
    to_fetch: list[tuple[int, Any]] = []
    for i, item in enumerate(plan.values):
        prev = old.get(item.name)
        if prev is not None and _unchanged(item, prev, changed_set, folder):
            entries[item.name] = _described(dict(prev), item, plan.descriptions)
            continue
        last = refused.get(item.name)
        if prev is None and last is not None and _refused_again(item, last, changed_set):
            result.skipped.append(last)  # refused last time, and unchanged since
            continue
        to_fetch.append((i, item))
    to_fetch, deferred = _within(to_fetch, bounds, _deferred_names(previous))
    for _, item in deferred:
        result.deferred.append(item.name)
        prev = old.get(item.name)
        why = f"not read yet: over the snapshot's bound of {bounds.describe()} per step"
        if prev is not None and (folder / prev["file"]).exists():
            entries[item.name] = prev  # the older value stands until the next snapshot
            result.marks.setdefault(BEHIND, []).append({"name": item.name, "reason": why})
        else:
            result.skipped.append(skip_entry(item.name, item.type_name, SkipCause.DEFERRED, why))
    try:
        async for i, item, obj in _retrieve_all(runtime, to_fetch):
            prev = old.get(item.name)
            if isinstance(obj, _Refused):
                if prev is not None and not obj.kept:
                    entries[item.name] = prev  # not reached (a kernel gone…): the last value stands
                else:  # the name now holds a value the runtime keeps: the old one is not it
                    result.skipped.append(obj.entry(item))
                continue
            if obj is not _GONE:
                version = int(prev.get("version", 0)) + 1 if prev else 1
                await writer.add(i, obj, item.name, f"{item.name}.{version}", item.size)
            del obj
        outcomes = await writer.finish()
    except BaseException as exc:  # cancelled too: the files of this one go, the last stands
        await writer.discard()
        if not isinstance(exc, OSError):
            raise
        raise DataIOError(
            describe_os_error(exc, "write", folder) + "; the previous snapshot is intact",
            path=folder,
        ) from None
    for outcome in outcomes:
        item = plan.values[outcome.key]
        if outcome.entry is None:
            result.skipped.append(_not_saved(item, outcome.error or "no format fits"))
            continue
        prev = old.get(item.name)
        entry = _described(outcome.entry, item, plan.descriptions)
        entry["version"] = int(prev.get("version", 0)) + 1 if prev else 1
        entries[item.name] = entry
        result.written.append(item.name)
    result.written += [
        d["name"] for d in plan.definitions if old_sources.get(d["name"]) != d.get("digest")
    ]
    result.saved = [entries[v.name] for v in plan.values if v.name in entries]
    # Before the manifest: the cleanup below removes every file the manifest does not list.
    files, sources = _carried(carry, plan, result, folder)
    result.saved += files
    result.definitions += sources
    result.given = given_of(runtime, result.saved)
    if late_marks is not None:
        result.marks.update(late_marks())
    commit = asyncio.ensure_future(
        asyncio.to_thread(atomic_write_text, folder / MANIFEST, _manifest(result), sync=sync)
    )
    try:
        try:
            await asyncio.shield(commit)
        except asyncio.CancelledError:  # too late: the commit, once begun, completes
            await commit
    except OSError as exc:
        raise DataIOError(
            describe_os_error(exc, "write", folder / MANIFEST) + "; the last snapshot is intact",
            path=folder,
        ) from None
    keep = {e["file"] for e in result.saved} | {MANIFEST}
    listed = {str(e.get("file")) for e in previous.get("variables", [])}
    for path in folder.iterdir():  # the files of the last snapshot, or a killed one's: no others
        ours = path.name in listed or _SNAPSHOT_FILE.match(path.name) is not None
        if ours and path.name not in keep and path.is_file() and not path.is_symlink():
            with contextlib.suppress(OSError):
                path.unlink()
    result.seconds = time.perf_counter() - started
    return result
