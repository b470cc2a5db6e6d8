"""Resume: rebuild the conversation and the namespace of a recorded session, then go on.

The history comes from the log's message records (a torn last line is ignored), so
a session killed mid-turn resumes with every completed step; the namespace comes
from the latest snapshot, whose manifest is only replaced once a snapshot is
complete. Injected data missing from the snapshot is loaded again from its source
when its sha256 still matches.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cave_tui.agent.events import Event
from cave_tui.session.reader import read_session, rebuild_history
from cave_tui.session.recorder import SessionRecorder
from cave_tui.session.transcript import transcript

RESUME_NOTE = (
    "[cave stopped during the previous turn and this session was resumed. "
    "Steps that finished were kept and their variables restored; "
    "the step that was running did not finish.]"
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
        return text


async def resume_session(
    folder: str | Path,
    agent: Any,
    runtime: Any = None,
    *,
    trust: bool = True,
    **recorder_kwargs: Any,
) -> ResumeResult:
    """Load session *folder* into *agent* and *runtime*, and keep recording into it.

    *trust* applies to pickles in the session's own snapshot (written by cave itself).
    """
    from cave_tui.dataio.dump import MANIFEST, load_dump

    runtime = runtime if runtime is not None else agent.runtime
    torn = read_session(folder).report.torn_tail
    recorder = SessionRecorder.open(folder, **recorder_kwargs)  # locks the log, cuts a torn tail
    data = read_session(folder)
    history = rebuild_history(data.records)
    agent.history[:] = history
    turns = max((int(r.get("turn") or 0) for r in data.of_type("user")), default=0)
    ended = {int(r.get("turn") or 0) for r in data.of_type("turn_end")}
    recorder.turn = turns
    recorder.attach(agent, runtime)
    result = ResumeResult(
        recorder, len(history), turns, torn_tail=torn, transcript=transcript(data.records)
    )
    if turns and turns not in ended:
        result.interrupted_turn = turns
        recorder.record({"type": "turn_end", "turn": turns, "status": "interrupted"}, sync=True)
        agent.history.append({"role": "user", "content": RESUME_NOTE})
        recorder._sync_history()
    if (recorder.namespace_dir / MANIFEST).exists():
        dump = await load_dump(runtime, recorder.namespace_dir, trust=trust)
        result.restored = list(dump.names)
        result.not_restored = list(dump.not_restored)
    await _reinject_missing(data.of_type("injection"), runtime, result, trust)
    recorder.record(
        {
            "type": "resume",
            "turn": turns,
            "messages": len(agent.history),
            "restored": result.restored,
            "not_restored": result.not_restored,
        },
        sync=True,
    )
    recorder.write_meta()
    return result


async def _reinject_missing(
    injections: list[dict[str, Any]], runtime: Any, result: ResumeResult, trust: bool
) -> None:
    from cave_tui.dataio.errors import DataIOError
    from cave_tui.session.replay import ReplayError, redo_setup

    present = set(await runtime.names())
    latest: dict[str, dict[str, Any]] = {}
    for record in injections:
        latest[record["name"]] = record
    for name, record in latest.items():
        if name in present:
            continue
        try:
            await redo_setup(record, runtime, trust=trust)
            result.restored.append(name)
            result.not_restored = [n for n in result.not_restored if n["name"] != name]
        except (DataIOError, ReplayError) as exc:
            result.not_restored.append({"name": name, "reason": str(exc)})
