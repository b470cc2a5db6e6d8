"""`SessionRecorder`: writes a session folder as the agent works.

It listens to the agent's events (`agent.add_event_sink`), so it records whatever
front end drives the agent: user messages, every model reply, code, outputs and
errors, usage, plus the agent's history messages (what resume rebuilds) and the
host's injections, loads and retrievals. Each record is flushed as it is written
and the log is fsynced at every step boundary. Namespace snapshots need the
runtime (async), so they are taken by `stream_events` (a drop-in wrapper of
`agent.stream_events`) after each step and at the turn's end, or by calling
`checkpoint()` / `end_turn()`. Those of steps and turn ends run in the background
(`snapshot_soon`: one at a time, a request meanwhile coalesced into one more, each
bounded by `bounds`), so the turn never waits for them; `close()` waits for the one in
flight and takes the exit snapshot whole.
Over 400 lines: every record kind the session log holds is written here, next to the
flush and snapshot ordering that makes a killed run resumable.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import threading
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.dataio.checkpoint import UNBOUNDED, SnapshotBounds
from cave_tui.runtime.tasks import cancel_and_wait
from cave_tui.session.figures import FIGURES, save_figures
from cave_tui.session.log import EventLog
from cave_tui.session.records import SNAPSHOT_READ_SEQ, SNAPSHOT_SEQ, RecordType
from cave_tui.session.store import (
    EVENTS,
    NAMESPACE,
    RETRIEVED,
    SessionError,
    SessionStore,
    read_meta,
    write_meta,
)
from cave_tui.session.title import has_title, session_title

RECORD_VERSION = 1
STEP_END = {
    ev.EventType.EXECUTION_OUTPUT,
    ev.EventType.EXECUTION_ERROR,
    ev.EventType.SECURITY_ERROR,
    ev.EventType.FINAL_RESPONSE,
    ev.EventType.ERROR,
    ev.EventType.MAX_STEPS_REACHED,
}
TERMINAL = {
    ev.EventType.FINAL_RESPONSE: "completed",
    ev.EventType.ERROR: "error",
    ev.EventType.MAX_STEPS_REACHED: "max_steps_reached",
    ev.EventType.CANCELLED: "cancelled",
}
# Streamed chunks: the whole reply, the cell's whole output, are recorded once.
SKIPPED_EVENTS = {ev.EventType.TEXT, ev.EventType.OUTPUT}


def _unseen(event: ev.Event) -> bool:
    return isinstance(event, ev.FinalResponseEvent) and event.unseen


def policy_of(runtime: Any) -> str:
    """The name of the security policy *runtime* checks cells with ("custom": not a named one)."""
    if runtime is None:
        return ""
    checker = getattr(runtime, "security_checker", None)
    policy = getattr(checker, "policy", None)
    return "trusted" if checker is None else policy if isinstance(policy, str) else "custom"


def runtime_meta(runtime: Any) -> dict[str, Any]:
    """What the session's meta says of the runtime it runs in, for replay to run there too:
    its label, whether it is a kernel, sandboxed, and its security policy."""
    if runtime is None:
        return {"runtime": None}
    return {
        "runtime": getattr(runtime, "label", None),
        "kernel": getattr(runtime, "isolated", False) is True,
        "sandbox": getattr(runtime, "sandbox", False) is True,
        "policy": policy_of(runtime),
    }


def _now_iso() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%S%z")


class SessionRecorder:
    """Records one session folder. Create with `create()` or continue one with `open()`."""

    def __init__(
        self,
        folder: Path,
        *,
        meta: dict[str, Any],
        snapshot_every: str = "step",
        sync: bool = True,
        bounds: SnapshotBounds | None = None,
    ) -> None:
        self.dir = Path(folder)
        self.meta = meta
        self.snapshot_every = snapshot_every  # "step" | "turn"
        self.bounds = bounds if bounds is not None else SnapshotBounds()  # per background one
        self.sync = sync
        self.log = EventLog(self.dir / EVENTS)
        self.agent: Any = None
        self.runtime: Any = None
        self.turn = int(meta.get("turns") or 0)
        self.step = 0
        self.warnings: list[str] = []
        self._lost_told_turn: int | None = None  # the turn a deleted folder was told in
        self.on_warning: Callable[[str], None] | None = None
        self._main: str | None = None
        self._messages: list[dict[str, Any]] = []
        self._dirty: set[str] = set()
        self.held: list[dict[str, Any]] = []  # snapshot entries a resume was not trusted to load
        self._pending_hashes: set[Any] = set()
        self._hashes_written = threading.Condition()
        self._turn_open = False
        self._turn_status: str | None = None
        self._closed = False
        self._lock = asyncio.Lock()
        self._snapshot: asyncio.Task[None] | None = None  # the background snapshot in flight
        self._again: bool | None = None  # a request meanwhile: run once more (True: full)
        self._asked_step: int | None = None  # the step of the last request not yet taken

    # -- construction --------------------------------------------------------------------
    @property
    def closed(self) -> bool:
        """The recording was closed: nothing more is written."""
        return self._closed

    @classmethod
    def create(
        cls,
        root: str | Path | None = None,
        *,
        title: str = "",
        label: str = "session",
        agent: Any = None,
        runtime: Any = None,
        made_by: str | None = None,
        folder: str | Path | None = None,
        **kwargs: Any,
    ) -> SessionRecorder:
        """Start a new session folder under *root* (default `./sessions`), or at *folder*.

        *title* is the session's first request when it is known (`cave run TASK`); without
        one the first request, cell or command names it (`name_from`). The folder is named
        after the title, else *label*."""
        from cave_tui import __version__

        if folder is not None:
            folder = Path(folder)
            try:
                folder.mkdir(parents=True)
            except FileExistsError:
                raise SessionError(f"{folder} already exists; not recording over it") from None
        else:
            folder = SessionStore(root).new_dir(session_title(title) or label)
        model = getattr(getattr(agent, "model", None), "model_id", None)
        meta = {
            "id": folder.name,
            "title": session_title(title),
            "created": _now_iso(),
            "updated": _now_iso(),
            "status": "running",
            "cave_version": __version__,
            "model": model,
            **runtime_meta(runtime or getattr(agent, "runtime", None)),
            "cwd": os.getcwd(),
            "pid": os.getpid(),
            "turns": 0,
            "steps": 0,
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0},
            "made_by": made_by or (f"recorded live with {model}" if model else "recorded live"),
        }
        recorder = cls(folder, meta=meta, **kwargs)
        recorder.log.append(
            {
                "type": "session",
                "version": RECORD_VERSION,
                "id": folder.name,
                "created": meta["created"],
            },
            sync=recorder.sync,
        )
        write_meta(folder, meta, sync=recorder.sync)
        if agent is not None:
            recorder.attach(agent, runtime)
        return recorder

    @classmethod
    def open(cls, folder: str | Path, **kwargs: Any) -> SessionRecorder:
        """Continue recording an existing session (after `resume`): appends to its log."""
        folder = Path(folder)
        if not (folder / EVENTS).exists():
            raise SessionError(f"{folder} is not a session (no {EVENTS})")
        meta = read_meta(folder) or {"id": folder.name, "title": ""}
        meta.update(status="running", pid=os.getpid(), updated=_now_iso())
        try:
            recorder = cls(folder, meta=meta, **kwargs)
        except OSError as exc:  # LogInUseError, or an unreadable folder
            raise SessionError(f"cannot resume {folder.name}: {exc}") from None
        if recorder.log.repaired:
            recorder.log.append({"type": "notice", "content": "a torn last record was dropped"})
        return recorder

    def attach(self, agent: Any, runtime: Any = None) -> None:
        """Record *agent*'s events from now on (its current history is the baseline)."""
        self.agent = agent
        self.runtime = runtime if runtime is not None else agent.runtime
        self._main = agent.name
        agent.add_event_sink(self.on_event)
        self._messages = [dict(m) for m in agent.history]
        model = getattr(getattr(agent, "model", None), "model_id", None)
        if model and not self.meta.get("model"):
            self.meta["model"] = model
        self.meta["max_steps"] = getattr(agent, "max_steps", None)
        self.meta["policies"] = [p.name for p in getattr(agent, "policies", [])]
        if not self.meta.get("policy"):  # the policy the session started with (changes: records)
            self.meta["policy"] = policy_of(self.runtime)

    def adopt_agent(self, agent: Any, runtime: Any = None) -> None:
        """Record *agent*, built after this recording began without one (`cave mcp` builds
        it in the background): attached, and the meta names its model as `create` would."""
        self.attach(agent, runtime)
        model = self.meta.get("model")
        if model and self.meta.get("made_by") == "recorded live":
            self.meta["made_by"] = f"recorded live with {model}"
        if not self._closed:
            self.write_meta()

    def detach(self) -> None:
        """Stop listening to the agent (best effort: the core has no remove_event_sink yet)."""
        sinks = getattr(self.agent, "_sinks", None)
        if isinstance(sinks, list) and self.on_event in sinks:
            sinks.remove(self.on_event)

    def adopt_history(self, messages: list[dict[str, Any]]) -> None:
        """Tell the recorder that *messages* are already recorded (used by resume)."""
        self._messages = [dict(m) for m in messages]

    def name_from(self, text: str) -> None:
        """Title the session with the first line of *text* (the user's first request, cell
        or command), unless it has a title already."""
        if self._closed or has_title(self.meta.get("title"), self.id):
            return
        title = session_title(text)
        if title:
            self.meta["title"] = title
            self.write_meta()

    # -- paths ------------------------------------------------------------------------------
    @property
    def id(self) -> str:
        return self.dir.name

    @property
    def namespace_dir(self) -> Path:
        return self.dir / NAMESPACE

    @property
    def retrieved_dir(self) -> Path:
        return self.dir / RETRIEVED

    # -- records -------------------------------------------------------------------------------
    def record(self, record: dict[str, Any], *, sync: bool = False) -> dict[str, Any] | None:
        """Append one record (flushed; fsynced if *sync*). Never raises: a full disk warns.

        A synced record marks a step boundary, where a deleted session folder is noticed
        and re-created (`recover_folder`) before the record is written.
        """
        if self.log.closed:
            return None
        if sync:
            self.recover_folder()
        try:
            return self.log.append(record, sync=sync and self.sync)
        except OSError as exc:
            self._warn(f"could not write to the session log {self.log.path}: {exc}")
            return None

    def _folder_gone(self) -> bool:
        """The session folder (or its log) was deleted or moved away."""
        try:
            return not self.dir.is_dir() or self.log.lost()
        except OSError:
            return True

    def recover_folder(self) -> bool:
        """If the session folder (or its log) was deleted or moved away while recording,
        re-create it with every record so far, the metadata and, at the next snapshot,
        the whole namespace (its manifest went with the folder); tell the user once.
        True when it did."""
        try:
            if not self.log.lost():
                return False
            size = self.log.relink()
        except OSError as exc:
            self._warn(f"the session folder {self.dir} is gone and cannot be re-created: {exc}")
            return False
        self.write_meta()
        if self._lost_told_turn == self.turn:
            return True  # deleted again in the same turn (as it was being re-created): told
        self._lost_told_turn = self.turn
        text = (
            f"the session folder {self.dir} was deleted while recording; it was re-created "
            f"with everything recorded so far ({size:,} bytes of events), and the namespace "
            "is saved again at the next snapshot"
        )
        self._warn(text)
        self.log.append({"type": "notice", "turn": self.turn, "content": text})
        return True

    def _warn(self, text: str) -> None:
        self.warnings.append(text)
        if self.on_warning is not None:
            with contextlib.suppress(Exception):
                self.on_warning(text)

    def _sync_history(self) -> None:
        """Record agent.history messages not yet recorded (or a reset if it was rewritten)."""
        if self.agent is None:
            return
        history = self.agent.history
        known = len(self._messages)
        if len(history) >= known and (known == 0 or history[known - 1] == self._messages[-1]):
            for message in history[known:]:
                self.record(
                    {
                        "type": "message",
                        "turn": self.turn,
                        "step": self.step,
                        "role": message.get("role"),
                        "content": message.get("content", ""),
                    }
                )
                self._messages.append(dict(message))
            return
        self.record({"type": "history_reset", "turn": self.turn, "messages": list(history)})
        self._messages = [dict(m) for m in history]

    def on_event(self, event: ev.Event) -> None:
        """The agent's event sink: write the event (and any new history) to the log."""
        if self._closed:
            return
        kind = event.type
        if event.agent not in (None, self._main):
            if kind not in SKIPPED_EVENTS:
                self.record({**event.to_dict(), "turn": self.turn, "subagent": True})
            return
        if kind is ev.EventType.USER:
            self.name_from(event.content)
            self.turn += 1
            self.step = 0
            self._turn_open = True
            self._turn_status = None
        elif kind is ev.EventType.STEP:
            self.step = event.step
        if kind in SKIPPED_EVENTS:
            return
        self._sync_history()
        # A final_answer() answer is not a reply: the step's reply was its code.
        answered = kind is ev.EventType.FINAL_RESPONSE and not _unseen(event)
        if kind is ev.EventType.CODE or answered:
            self.record(
                {"type": "reply", "turn": self.turn, "step": event.step, "text": self._last_reply()}
            )
        self._save_figures(event, f"{self.turn}-{event.step}")
        data = event.to_dict()
        data["turn"] = self.turn
        if kind is ev.EventType.USAGE:
            usage = self.meta.setdefault("usage", {})
            for key in ("prompt_tokens", "completion_tokens", "total_tokens"):
                usage[key] = int(usage.get(key, 0)) + int(data.get(key, 0))
        if kind in (ev.EventType.EXECUTION_OUTPUT, ev.EventType.EXECUTION_ERROR):
            self._dirty.update(getattr(event, "changed", []) or [])
        if kind in TERMINAL:
            self._turn_status = TERMINAL[kind]
        if kind in STEP_END and kind not in (ev.EventType.FINAL_RESPONSE, ev.EventType.ERROR):
            self.meta["steps"] = int(self.meta.get("steps") or 0) + 1
        self.record(data, sync=kind in STEP_END)

    def _save_figures(self, event: ev.Event, stem: str) -> None:
        """Save the figures of a cell's event as PNGs in the folder (`figures/<stem>-N.png`)
        and name them on the event, recorded (`figure_files`) and to open now."""
        if not isinstance(event, ev.CellResultEvent) or not event.figures:
            return
        try:
            event.figure_files = save_figures(self.dir, stem, event.figures)
        except OSError as exc:
            self._warn(f"could not save the cell's figures in {self.dir / FIGURES}: {exc}")
            return
        event.saved_figures = [str(self.dir / name) for name in event.figure_files]

    def _last_reply(self) -> str:
        for message in reversed(self.agent.history if self.agent is not None else []):
            if message.get("role") == "assistant":
                return str(message.get("content", ""))
        return ""

    def record_user_cell(self, event: ev.Event) -> None:
        """Log one event of a cell the user ran directly (`agent == USER_AGENT`, a `!` cell).

        Its code and outcome records carry `cell` (numbered across the session) and
        `before_turn`: replay runs the cell again in its place among the turns.
        """
        if event.agent != ev.USER_AGENT or self._closed:
            return
        kind = event.type
        if isinstance(event, ev.CodeEvent):
            self.name_from("!" + event.code.lstrip())
            self.meta["user_cells"] = int(self.meta.get("user_cells") or 0) + 1
        elif kind not in (ev.EventType.EXECUTION_OUTPUT, ev.EventType.EXECUTION_ERROR):
            return
        self._dirty.update(getattr(event, "changed", None) or [])
        self._save_figures(event, f"u{int(self.meta.get('user_cells') or 0)}")
        record = {
            **event.to_dict(),
            "turn": self.turn,
            "before_turn": self.turn + 1,
            "cell": int(self.meta.get("user_cells") or 0),
        }
        self.record(record, sync=kind is not ev.EventType.CODE)

    def record_policy(self, policy: str) -> None:
        """Log that the user set the security policy to *policy* (`/policy`): replay sets
        it again in its place among the turns and the user's cells."""
        record = {
            "type": RecordType.POLICY.value,
            "turn": self.turn,
            "before_turn": self.turn + 1,
            "policy": policy,
        }
        self.record(record, sync=True)

    def record_injection(self, injection: Any) -> None:
        """Log an injection (an `Injection` or its record) with its source and sha256.

        If the file's sha256 is still being computed in the background, the record is
        written when it is done (`before_turn` keeps its place among the turns, and
        `after_seq` its place among the user's cells) and `close()` waits for it.
        """
        before = self.turn + 1
        after = self.log.seq
        pending = getattr(injection, "sha256_future", None)

        def write(_: Any = None) -> None:
            try:
                data = injection.to_record() if hasattr(injection, "to_record") else dict(injection)
                record = {"type": "injection", "before_turn": before, "after_seq": after, **data}
                self.record(record, sync=True)
            finally:
                with self._hashes_written:  # only now: the record is in the log
                    self._pending_hashes.discard(pending)
                    self._hashes_written.notify_all()

        name = injection.name if hasattr(injection, "name") else injection["name"]
        self._dirty.add(name)
        if pending is not None and not pending.done():
            with self._hashes_written:
                self._pending_hashes.add(pending)
            pending.add_done_callback(write)
        else:
            write()

    def wait_for_hashes(self, timeout: float | None = None) -> None:
        """Block until background sha256s of injected files are recorded (the records
        written, not only the sums known: a future's waiters wake before its callbacks run)."""
        with self._hashes_written:
            self._hashes_written.wait_for(lambda: not self._pending_hashes, timeout)

    def record_load(
        self, dump: Any, manifest_sha256: str | None = None, *, trusted: bool | None = None
    ) -> None:
        """Log a `--load DIR` / dump restore; *trusted*: its pickles were allowed to load."""
        self.record(
            {
                "type": "load",
                "before_turn": self.turn + 1,
                "path": str(dump.directory),
                "names": list(dump.names),
                "manifest_sha256": manifest_sha256,
                "trusted": trusted,
            },
            sync=True,
        )
        self._dirty.update(dump.names)

    def record_retrieval(self, name: str, saved: Any) -> None:
        self.record(
            {
                "type": "retrieval",
                "turn": self.turn,
                "name": name,
                "path": str(saved.path),
                "format": saved.format,
                "bytes": saved.bytes,
                "sha256": saved.sha256,
            },
            sync=True,
        )

    def record_note(self, text: str) -> None:
        self.record({"type": "notice", "turn": self.turn, "content": text}, sync=True)

    def hold(self, entries: list[dict[str, Any]]) -> None:
        """Keep these snapshot entries (pickles and definitions not trusted at resume) until
        their names are bound again; the seal names them as untrusted."""
        self.held = [dict(e) for e in entries]

    def _seal_snapshot(self, saved: list[dict[str, Any]]) -> None:
        """Seal the manifest just written (see `seal.py`), if it lists exactly the *saved*
        entries, and keep the seal in meta.json (no seal otherwise)."""
        from cave_tui.dataio.bounded_read import MANIFEST_LIMIT, read_regular
        from cave_tui.dataio.dump import MANIFEST
        from cave_tui.session.seal import META_KEY, seal

        def files(entries: Any) -> list[tuple[Any, ...]]:
            keys = ("name", "format", "file", "sha256")
            return sorted(tuple(e.get(k) for k in keys) for e in entries)

        made = None
        with contextlib.suppress(OSError, ValueError, TypeError, KeyError, AttributeError):
            manifest = read_regular(self.namespace_dir / MANIFEST, MANIFEST_LIMIT)
            if files(json.loads(manifest)["variables"]) == files(saved):
                made = seal(manifest, (e["name"] for e in self.held))
        if made is None:
            self.meta.pop(META_KEY, None)
        else:
            self.meta[META_KEY] = made.to_meta()
        self.write_meta()

    def mark_changed(self, *names: str) -> None:
        """Names changed outside the agent's cells (e.g. by a front end), for the next snapshot."""
        self._dirty.update(names)

    # -- snapshots and turn ends ------------------------------------------------------------
    def snapshot_soon(self, *, full: bool = False) -> None:
        """Take a snapshot in the background, bounded by `bounds` (see `checkpoint`). One
        runs at a time: requests made meanwhile run as one more after it."""
        if self.runtime is None or self._closed:
            return
        self._asked_step = self.step
        if self._snapshot is not None and not self._snapshot.done():
            self._again = full or bool(self._again)
            return
        self._snapshot = asyncio.get_running_loop().create_task(
            self._snapshots(full), name="cave-session-snapshot"
        )

    async def _snapshots(self, full: bool) -> None:
        while True:
            await self.checkpoint(full=full, bounds=self.bounds, quick=not full, recover=False)
            if self._again is None:
                return
            full, self._again = self._again, None

    @property
    def snapshotting(self) -> bool:
        """Whether a background snapshot is in flight."""
        return self._snapshot is not None and not self._snapshot.done()

    async def settle(self) -> None:
        """Wait for the background snapshot in flight, and those queued after it."""
        while (task := self._snapshot) is not None and not task.done():
            try:
                await asyncio.shield(task)
            except asyncio.CancelledError:
                if not task.cancelled():  # this wait was cancelled, not the snapshot
                    raise

    async def cancel_snapshot(self) -> None:
        """Stop the background snapshot in flight (and those queued): the previous one
        stays whole, and what it did not save goes into the next."""
        task, self._snapshot, self._again = self._snapshot, None, None
        if task is not None and not task.done():
            await cancel_and_wait(task)

    async def checkpoint(
        self,
        *,
        full: bool = False,
        bounds: SnapshotBounds = UNBOUNDED,
        quick: bool = False,
        recover: bool = True,
    ) -> Any:
        """Snapshot the namespace into `namespace/`, writing only what changed.

        Small values are compared by content (a digest of their pickle, so an unseen
        in-place mutation is caught): under `STEP_DIGEST_BELOW` bytes after a step, under
        `RESAVE_BELOW` with *full* (turn ends); bigger ones are written when reported changed.
        At most *bounds* of values are read: the others stay changed for the next one.
        *quick* (a step's): values reported unchanged are not digested (`trust_reports`).

        Returns the `DumpResult`, or None when it failed or was cancelled (a failure is
        logged and reported through `warnings`/`on_warning`; the previous snapshot stays).
        Without *recover* (a background snapshot, which runs beside the cells) a deleted
        session folder is left alone, never re-created under a cell that may be deleting it:
        the next step re-creates it (`recover_folder`) and the next snapshot saves it all.
        """
        if self.runtime is None or self._closed:
            return None
        if recover:
            self.recover_folder()
        elif self._folder_gone():
            return None
        from cave_tui.dataio.checkpoint import (
            RESAVE_BELOW,
            STEP_DIGEST_BELOW,
            checkpoint_namespace,
        )
        from cave_tui.dataio.errors import DataIOError

        async with self._lock:
            dirty = set(self._dirty)
            self._dirty.clear()
            # The step that asked for it (the turn goes on while a background one runs).
            step = self.step if self._asked_step is None else self._asked_step
            self._asked_step = None
            try:
                result = await checkpoint_namespace(
                    self.runtime,
                    self.namespace_dir,
                    changed=dirty,
                    resave_below=RESAVE_BELOW if full else STEP_DIGEST_BELOW,
                    sync=self.sync,
                    carry=self.held,
                    # Every record up to here is in the snapshot: resume compares the rest.
                    marks={SNAPSHOT_SEQ: self.log.seq},
                    bounds=bounds,
                    trust_reports=quick,
                    late_marks=lambda: {SNAPSHOT_READ_SEQ: self.log.seq},
                    parents=recover,
                )
            except asyncio.CancelledError:
                self._dirty |= dirty  # the next snapshot saves them
                raise
            except Exception as exc:  # a failed snapshot must never stop the agent's turn
                self._dirty |= dirty
                if not recover and self._folder_gone():
                    return None  # deleted as it was written: told and redone at the next step
                detail = str(exc) if isinstance(exc, DataIOError | OSError) else repr(exc)
                self._warn(f"namespace snapshot failed: {detail}")
                self.record({"type": "notice", "turn": self.turn, "content": str(exc)})
                failed = {"type": RecordType.SNAPSHOT_FAILED.value, "turn": self.turn}
                self.record({**failed, "step": step, "reason": detail}, sync=True)
                return None
            self._dirty.update(result.deferred)  # over the bounds: the next one reads them
            kept = {_held_key(e) for e in [*result.saved, *result.definitions]}
            self.held = [e for e in self.held if _held_key(e) in kept]
            self._seal_snapshot(result.saved)
            self.record(
                {
                    "type": "snapshot",
                    "turn": self.turn,
                    "step": step,
                    "variables": len(result.saved),
                    "bytes": result.bytes,
                    "definitions": [d["name"] for d in result.definitions],
                    "written": result.written,
                    "deferred": result.deferred,
                    "skipped": [
                        {"name": s["name"], "reason": s["reason"], "cause": s.get("cause")}
                        for s in result.skipped
                    ],
                },
                sync=True,
            )
            return result

    async def end_turn(self, status: str | None = None) -> None:
        """Close the current turn: log it, update `meta.json`, and snapshot the namespace
        in the background (`snapshot_soon`: the turn does not wait for it)."""
        if self._close_turn(status):
            self.snapshot_soon(full=True)

    def _close_turn(self, status: str | None) -> bool:
        """Log the current turn's end and update `meta.json`; False if no turn was open."""
        if not self._turn_open or self._closed:
            return False
        self._turn_open = False
        self._sync_history()
        final = status or self._turn_status or "unknown"
        self.record(
            {"type": "turn_end", "turn": self.turn, "status": final, "steps": self.step},
            sync=True,
        )
        self.meta["turns"] = self.turn
        self.write_meta()
        return True

    def write_meta(self) -> None:
        self.meta["updated"] = _now_iso()
        try:
            write_meta(self.dir, self.meta, sync=self.sync)
        except OSError as exc:
            self._warn(f"could not update {self.dir / 'meta.json'}: {exc}")

    async def stream_events(self, task: str) -> AsyncIterator[ev.Event]:
        """`agent.stream_events(task)`, snapshotting after each step and at the turn's end."""
        if self.agent is None:
            raise SessionError("attach an agent to the recorder first")
        completed = False
        try:
            async for event in self.agent.stream_events(task):
                yield event
                if (
                    self.snapshot_every == "step"
                    and event.agent in (None, self._main)
                    and event.type in STEP_END
                    and event.type not in TERMINAL
                ):
                    self.snapshot_soon()
            completed = True
        finally:
            await asyncio.shield(self.end_turn(None if completed else "cancelled"))

    async def run(self, task: str, render: Callable[[ev.Event], None] | None = None) -> str:
        """Run one turn through `stream_events`; returns the turn's status."""
        async for event in self.stream_events(task):
            if render is not None:
                render(event)
        return self._turn_status or "unknown"

    @property
    def turn_status(self) -> str | None:
        return self._turn_status

    async def close(self, status: str = "closed") -> None:
        """End an open turn, take the exit snapshot and mark the session closed. Idempotent."""
        if self._closed:
            return
        await asyncio.to_thread(self.wait_for_hashes, 600)
        ended = self._close_turn("interrupted")
        if not ended:
            self._sync_history()
        await self.settle()  # the one in flight completes; then the exit snapshot, whole
        await self.checkpoint(full=ended)
        self._closed = True
        self.meta["status"] = status
        self.meta["turns"] = self.turn
        self.record({"type": "closed", "status": status}, sync=True)
        self.write_meta()
        self.log.close()

    def close_now(self, status: str = "terminated") -> None:
        """Synchronous last resort (no snapshot): flush the log and mark the status."""
        if self._closed:
            return
        self.wait_for_hashes(5)
        if self._snapshot is not None:  # the previous snapshot stays whole
            self._snapshot.cancel()
        self._closed = True
        with contextlib.suppress(Exception):
            self.log.append({"type": "closed", "status": status}, sync=True)
        self.meta["status"] = status
        self.write_meta()
        with contextlib.suppress(Exception):
            self.log.close()


def _held_key(entry: dict[str, Any]) -> tuple[str, str]:
    """What identifies a held entry in a snapshot: its name and file (a variable's) or
    source (a definition's)."""
    return str(entry["name"]), str(entry.get("file") or entry.get("source"))
