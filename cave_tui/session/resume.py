"""Resume: rebuild the conversation and the namespace of a recorded session, then go on.

The history comes from the log's message records (a torn last line is ignored), so
a session killed mid-turn resumes with every completed step; the namespace comes
from the latest snapshot, whose manifest is only replaced once a snapshot is
complete. Injected data missing from the snapshot is loaded again from its source
when its sha256 still matches. The snapshot's pickles load without `--trust` only when
the session's seal (`seal.py`) shows this user's cave wrote them, and never without it
into a runtime less confined than the one that wrote them (the snapshot's `provenance`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cave_tui.agent.events import Event
from cave_tui.runtime.provenance import Provenance, provenance_of
from cave_tui.session.log import SkippedLine
from cave_tui.session.reader import SessionData, read_session, rebuild_history
from cave_tui.session.recorder import SessionRecorder, policy_of
from cave_tui.session.records import RecordType
from cave_tui.session.seal import META_KEY as SEAL_KEY
from cave_tui.session.seal import Seal, vouched_names
from cave_tui.session.since_snapshot import (
    AfterSnapshot,
    SnapshotState,
    StaleName,
    add_behind,
    changes_after,
    compare,
    read_mark,
    snapshot_mark,
)
from cave_tui.session.store import EVENTS, NAMESPACE, SessionError, read_meta
from cave_tui.session.transcript import transcript

if TYPE_CHECKING:
    from cave_tui.dataio.dump import Vouch
    from cave_tui.dataio.progress import ProgressCallback

RESUME_NOTE = (
    "[cave stopped during the previous turn and this session was resumed. "
    "Steps that finished were kept and their variables restored; "
    "the step that was running did not finish.]"
)
STALE_NOTE = (
    "[The namespace was restored from a snapshot older than this conversation "
    "(cave stopped before it could save the latest state). {details} "
    "Check these names before using them.]"
)


@dataclass
class ResumeResult:
    recorder: SessionRecorder
    messages: int
    turns: int
    restored: list[str] = field(default_factory=list)
    not_restored: list[dict[str, str]] = field(default_factory=list)  # {"name", "reason"}
    interrupted_turn: int | None = None
    torn_tail: bool = False
    transcript: list[Event] = field(default_factory=list)  # drawn again by the front end
    snapshot: SnapshotState = SnapshotState.NONE
    stale: list[StaleName] = field(default_factory=list)  # differs from what the log says
    after: AfterSnapshot = field(default_factory=AfterSnapshot)  # the log after the snapshot
    skipped_records: list[SkippedLine] = field(default_factory=list)  # unusable log lines

    def snapshot_problem(self) -> str | None:
        """Why nothing came from a snapshot, when that is not because nothing ran."""
        failures = self.after.failures
        why = f" ({failures[-1]})" if failures else ""
        if self.snapshot is SnapshotState.MISSING:
            return (
                f"the namespace snapshot is missing ({NAMESPACE}/manifest.json not found, "
                f"although the log records snapshots){why}: no variable came from it"
            )
        if self.snapshot is SnapshotState.FAILED:
            return (
                f"every namespace snapshot of this session failed "
                f"({len(failures)} tried; last: {failures[-1]}): no variable came from one"
            )
        if failures:
            return f"the last {len(failures)} snapshots failed ({failures[-1]})"
        return None

    def differences(self) -> list[str]:
        """Each way the restored namespace differs from what the conversation shows."""
        lines = [s.describe() for s in self.stale if s.restored]
        missing: dict[str, list[str]] = {}  # grouped by what bound them
        for stale in self.stale:
            if not stale.restored:
                missing.setdefault(stale.bound_by(), []).append(stale.name)
        lines += [
            f"not restored: {', '.join(names)} ({where} bound them after the last snapshot)"
            if len(names) > 1
            else f"not restored: {names[0]} ({where} bound it after the last snapshot)"
            for where, names in missing.items()
        ]
        lines += [
            f"{where} was stopped mid-way after the last snapshot: what it changed is unknown"
            for where in self.after.interrupted
        ]
        return lines

    def summary(self) -> str:
        text = (
            f"resumed session {self.recorder.id}: {self.turns} turns, {self.messages} messages, "
            f"{len(self.restored)} names restored"
        )
        if self.interrupted_turn:
            text += f" (turn {self.interrupted_turn} had been interrupted)"
        if self.not_restored:
            text += "; not restored: " + ", ".join(
                f"{n['name']} ({n['reason']})" for n in self.not_restored
            )
        problem = self.snapshot_problem()
        if problem:
            text += f"; {problem}"
        differences = self.differences()
        if differences:
            text += "; the namespace is older than the conversation: " + "; ".join(differences)
        if self.skipped_records:
            shown = ", ".join(str(s) for s in self.skipped_records[:10])
            more = len(self.skipped_records) - 10
            text += f"; skipped unusable records of {EVENTS}: {shown}" + (
                f" and {more} more" if more > 0 else ""
            )
        return text


def snapshot_vouch(folder: str | Path) -> Vouch:
    """What the session's seal (in `meta.json`) vouches for in a snapshot manifest."""
    stored = Seal.from_meta(read_meta(Path(folder)).get(SEAL_KEY))

    def vouch(manifest: bytes, names: list[str]) -> set[str]:
        return vouched_names(stored, manifest, names)

    return vouch


def check_snapshot(folder: str | Path, into: Provenance = Provenance.IN_PROCESS) -> list[str]:
    """Check session *folder*'s snapshot without loading it; the names that need --trust
    to load into a runtime running as *into* (`dataio.dump.read_dump` says which).

    Raises `DataIOError` (a `ManifestError` lists every problem) when it cannot be restored.
    """
    from cave_tui.dataio.dump import MANIFEST, check_dump

    snapshot = Path(folder) / NAMESPACE
    if not (snapshot / MANIFEST).exists():
        return []
    return check_dump(snapshot, vouch=snapshot_vouch(folder), partial=True, into=into)


async def resume_session(
    folder: str | Path,
    agent: Any,
    runtime: Any = None,
    *,
    trust: bool = False,
    progress: ProgressCallback | None = None,
    **recorder_kwargs: Any,
) -> ResumeResult:
    """Load session *folder* into *agent* and *runtime*, and keep recording into it.

    The snapshot is checked before anything changes. Its pickles (and functions the host
    never sent) load when the session's seal shows this user's cave wrote them and
    *runtime* is not less confined than the runtime that wrote them, or with *trust*;
    others are left out (named in `not_restored`) and pickles stay in the snapshot for a
    resume with trust. On an error nothing is kept: the agent's history is put back and
    the session is not recorded into. Reading the snapshot's variables reports to
    *progress* (as `load_dump`).
    """
    from cave_tui.dataio.dump import MANIFEST, load_dump

    runtime = runtime if runtime is not None else agent.runtime
    check_snapshot(folder, provenance_of(runtime))
    first = read_session(folder)
    torn, skipped = first.report.torn_tail, first.report.skipped
    recorder = SessionRecorder.open(folder, **recorder_kwargs)  # locks the log, cuts a torn tail
    before = agent.conversation.snapshot()
    try:
        data = read_session(folder)
        history = rebuild_history(data.records)
        agent.conversation.replace(history)
        turns = max((int(r.get("turn") or 0) for r in data.of_type("user")), default=0)
        ended = {int(r.get("turn") or 0) for r in data.of_type("turn_end")}
        recorder.turn = turns
        recorder.attach(agent, runtime)
        result = ResumeResult(
            recorder,
            len(history),
            turns,
            torn_tail=torn,
            transcript=transcript(data.records, data.dir),
        )
        result.skipped_records = list(skipped)
        marks: dict[str, Any] | None = None
        if (recorder.namespace_dir / MANIFEST).exists():
            dump = await load_dump(
                runtime,
                recorder.namespace_dir,
                trust=trust,
                vouch=snapshot_vouch(folder),
                hold_back=True,
                partial=True,
                progress=progress,
            )
            result.restored = list(dump.names)
            result.not_restored = list(dump.not_restored)
            result.snapshot = SnapshotState.RESTORED
            marks = dump.marks
            recorder.hold(dump.held)
        else:
            result.snapshot = _missing_snapshot_state(data)
        mark = snapshot_mark(data.records, marks)
        result.after = changes_after(data.records, mark, read_mark(marks))
        add_behind(result.after, marks, mark)
        if turns and turns not in ended:
            result.interrupted_turn = turns
            recorder.record({"type": "turn_end", "turn": turns, "status": "interrupted"}, sync=True)
            agent.conversation.add_note(RESUME_NOTE)
            recorder._sync_history()
        held = {e["name"] for e in recorder.held}
        fresh = await _reinject_missing(data.of_type("injection"), runtime, result, trust, held)
        explained = {n["name"] for n in result.not_restored}
        present = set(await runtime.names())
        result.stale = compare(result.after, present, explained, fresh)
        differences = result.differences()
        if differences:
            note = STALE_NOTE.format(details="; ".join(differences) + ".")
            agent.conversation.add_note(note)
            recorder._sync_history()
    except BaseException as exc:
        recorder.detach()
        recorder.log.close()
        agent.conversation.replace(before)
        if isinstance(exc, KeyError | TypeError | ValueError):  # a record of a shape not caught
            raise SessionError(
                f"cannot resume {Path(folder).name}: a record of its {EVENTS} is unusable "
                f"({type(exc).__name__}: {exc}); nothing was changed"
            ) from exc
        raise
    recorder.record(
        {
            "type": "resume",
            "turn": turns,
            "messages": len(agent.history),
            "restored": result.restored,
            "not_restored": result.not_restored,
            "trust": trust,
            "snapshot": result.snapshot.value,
            "stale": [s.to_dict() for s in result.stale],
            "skipped_records": [s.line for s in result.skipped_records],
        },
        sync=True,
    )
    policy = policy_of(runtime)
    if policy and policy != policy_at_end(data):  # resumed under another policy: a change
        recorder.record_policy(policy)
    recorder.write_meta()
    return result


def policy_at_end(data: SessionData) -> str | None:
    """The security policy the session's model cells were checked with when it ended: its
    last `policy` record's, else the one it started with (None: not recorded)."""
    changes = data.of_type(RecordType.POLICY)
    if changes:
        return str(changes[-1]["policy"])
    policy = data.meta.get("policy")
    return policy if isinstance(policy, str) else None


def _missing_snapshot_state(data: SessionData) -> SnapshotState:
    """Why a session has no snapshot manifest: lost, never written, or never taken."""
    if data.of_type(RecordType.SNAPSHOT):
        return SnapshotState.MISSING
    if data.of_type(RecordType.SNAPSHOT_FAILED):
        return SnapshotState.FAILED
    return SnapshotState.NONE


async def _reinject_missing(
    injections: list[dict[str, Any]],
    runtime: Any,
    result: ResumeResult,
    trust: bool,
    held: set[str],
) -> dict[str, int]:
    """Inject again, from their sources, the injected names the snapshot did not restore;
    returns each one done with the seq of its record."""
    from cave_tui.dataio.errors import DataIOError
    from cave_tui.session.replay import ReplayError, redo_setup

    present = set(await runtime.names())
    latest: dict[str, dict[str, Any]] = {}
    for record in injections:
        latest[record["name"]] = record
    done: dict[str, int] = {}
    for name, record in latest.items():
        if name in present or name in held:  # held: already named in not_restored
            continue
        try:
            await redo_setup(record, runtime, trust=trust)
            result.restored.append(name)
            result.not_restored = [n for n in result.not_restored if n["name"] != name]
            done[name] = int(record.get("seq") or 0)
        except (DataIOError, ReplayError) as exc:
            result.not_restored.append({"name": name, "reason": str(exc)})
        except (KeyError, TypeError, ValueError) as exc:  # its record lacks what it needs
            reason = f"its injection record (seq {record.get('seq')}) is unusable ({exc!r})"
            result.not_restored.append({"name": name, "reason": reason})
    return done
