"""What the session log says changed after the namespace snapshot a resume restores.

A snapshot is taken after each step; a process killed between a step's output and its
snapshot, or a snapshot that failed (a full disk), leaves the namespace older than the
conversation. `changes_after` reads, from the log records after the snapshot's mark (its
manifest's `log_seq`, else the last `snapshot` record), the names each cell, injection or
load bound, changed or deleted; `compare` sets them against what was restored, so resume
says each difference: a value older than the conversation shows, or a name missing.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable
from dataclasses import dataclass, field
from enum import StrEnum
from typing import Any

from cave_tui.agent.events import USER_AGENT, EventType
from cave_tui.session.records import RecordType

CELL_OUTCOMES = (EventType.EXECUTION_OUTPUT, EventType.EXECUTION_ERROR)


class SnapshotState(StrEnum):
    """What a resume found of the namespace snapshot."""

    RESTORED = "restored"  # namespace/manifest.json was there and was loaded
    MISSING = "missing"  # the log records snapshots, but namespace/manifest.json is gone
    FAILED = "failed"  # every snapshot the session tried failed (the log says why)
    NONE = "none"  # the session never took one (nothing ran before it stopped)


@dataclass(frozen=True)
class Change:
    """One record after the snapshot that touched a name: where, and whether it deleted it."""

    seq: int
    where: str  # "turn 1 step 3", "your cell 2", "the injection of sales", ...
    deleted: bool = False
    maybe: bool = False  # ran while the snapshot read the values: it may hold the change


@dataclass
class AfterSnapshot:
    """The log after the snapshot: each name's changes, and cells that may have changed any."""

    changes: dict[str, list[Change]] = field(default_factory=dict)
    interrupted: list[str] = field(default_factory=list)  # cells stopped mid-way (any change)
    failures: list[str] = field(default_factory=list)  # why later snapshots failed


@dataclass(frozen=True)
class StaleName:
    """A name whose restored state differs from what the conversation shows."""

    name: str
    restored: bool  # a value was restored (an older one); False: the name is missing
    changes: tuple[Change, ...]

    def bound_by(self) -> str:
        """The cells, injections and loads that changed it, joined ("turn 1 step 2 and ...")."""
        return _joined(c.where for c in self.changes)

    def describe(self) -> str:
        wheres = self.bound_by()
        last = self.changes[-1]
        if self.restored and last.deleted:
            return f"{self.name}: restored, but {last.where} deleted it after the last snapshot"
        if self.restored and all(c.maybe for c in self.changes):
            return (
                f"{self.name}: restored a value the last snapshot read while {wheres} ran: "
                "it may be from before or after that change"
            )
        if self.restored:
            return (
                f"{self.name}: restored the value from before {self.changes[0].where}; "
                f"{wheres} ran after the last snapshot and changed it"
            )
        return f"{self.name}: not restored; {wheres} bound it after the last snapshot"

    def to_dict(self) -> dict[str, Any]:
        return {
            "name": self.name,
            "restored": self.restored,
            "changed_by": [c.where for c in self.changes],
        }


def _joined(parts: Iterable[str]) -> str:
    unique = list(dict.fromkeys(parts))
    return unique[0] if len(unique) == 1 else ", ".join(unique[:-1]) + " and " + unique[-1]


def _where(record: dict[str, Any]) -> str:
    if record.get("agent") == USER_AGENT:
        return f"your cell {int(record.get('cell') or 0)}"
    step = f"turn {int(record.get('turn') or 0)} step {int(record.get('step') or 0)}"
    return f"a subagent in {step}" if record.get("subagent") else step


def snapshot_mark(records: list[dict[str, Any]], marks: dict[str, Any] | None) -> int:
    """The seq of the last log record the restored snapshot holds the effect of (0: none).

    From the manifest's mark when it has one; for snapshots written before marks, the
    last `snapshot` record (a snapshot is logged once its manifest is in place).
    """
    from cave_tui.session.records import SNAPSHOT_SEQ

    if marks is None:
        return 0
    mark = marks.get(SNAPSHOT_SEQ)
    if type(mark) is int:
        return mark
    logged = [r for r in records if r.get("type") == RecordType.SNAPSHOT]
    return int(logged[-1].get("seq") or 0) if logged else 0


def read_mark(marks: dict[str, Any] | None) -> int | None:
    """The seq logged before the restored snapshot's values were all read (None: not kept)."""
    from cave_tui.session.records import SNAPSHOT_READ_SEQ

    mark = (marks or {}).get(SNAPSHOT_READ_SEQ)
    return mark if type(mark) is int else None


def changes_after(
    records: list[dict[str, Any]], mark: int, read: int | None = None
) -> AfterSnapshot:
    """What the records after seq *mark* say cells, injections and loads did to names;
    those up to seq *read* ran while the snapshot read the values (`Change.maybe`)."""
    after = AfterSnapshot()
    for record in records:
        seq = record.get("seq")
        if type(seq) is not int or seq <= mark:
            continue
        kind = record.get("type")
        found: list[tuple[str, bool]] = []
        if kind in CELL_OUTCOMES:
            where = _where(record)
            found = [(n, False) for n in record.get("changed") or []]
            found += [(n, True) for n in record.get("deleted") or []]
            if record.get("interrupted"):
                after.interrupted.append(where)
        elif kind == RecordType.INJECTION:
            where = f"the injection of {record['name']}"
            found = [(record["name"], False)]
        elif kind == RecordType.LOAD:
            where = f"loading {record['path']}"
            found = [(n, False) for n in record["names"]]
        elif kind == RecordType.SNAPSHOT_FAILED:
            after.failures.append(str(record.get("reason") or "no reason recorded"))
            continue
        else:
            continue
        maybe = read is not None and seq <= read
        for name, deleted in found:
            after.changes.setdefault(name, []).append(Change(seq, where, deleted, maybe))
    return after


BEHIND_WHERE = "a step the snapshot had not saved yet (over its per-step bound)"


def add_behind(after: AfterSnapshot, marks: dict[str, Any] | None, mark: int) -> None:
    """Names the snapshot keeps an older value of (its manifest's `behind`: over a step's
    bounds, not read again yet) count as changed after it, so resume names them."""
    from cave_tui.dataio.checkpoint import BEHIND

    behind = (marks or {}).get(BEHIND)
    for entry in behind if isinstance(behind, list) else []:
        name = entry.get("name") if isinstance(entry, dict) else None
        if isinstance(name, str):
            after.changes.setdefault(name, []).insert(0, Change(mark, BEHIND_WHERE))


def compare(
    after: AfterSnapshot,
    present: Collection[str],
    explained: Collection[str],
    fresh: dict[str, int],
) -> list[StaleName]:
    """The names whose state after the resume is not what the log says it was.

    *present*: the names bound now; *explained*: names already reported not restored
    (with their own reason); *fresh*: names bound again from their source at the resume,
    with the seq of the record they were redone from (changes up to it are in them).
    """
    stale: list[StaleName] = []
    for name, changes in after.changes.items():
        relevant = tuple(c for c in changes if c.seq > fresh.get(name, 0))
        if not relevant:
            continue
        bound = name in present
        if bound or (not relevant[-1].deleted and name not in explained):
            stale.append(StaleName(name, bound, relevant))
    return stale
