"""Reading a recorded session back: records, the agent history, and the turns."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum
from pathlib import Path
from typing import Any

from cave_tui.agent.events import USER_AGENT, CodeSource, InterventionKind, NoticeKind
from cave_tui.session.log import ReadReport, read_records
from cave_tui.session.records import RecordType
from cave_tui.session.store import EVENTS, SessionError, read_meta

OUTCOME_TYPES = ("execution_output", "execution_error", "security_error")


@dataclass
class SessionData:
    """A session folder as read from disk."""

    dir: Path
    meta: dict[str, Any]
    records: list[dict[str, Any]]
    report: ReadReport

    @property
    def id(self) -> str:
        return self.dir.name

    def of_type(self, *types: str) -> list[dict[str, Any]]:
        return [r for r in self.records if r.get("type") in types and not r.get("subagent")]


def read_session(folder: str | Path) -> SessionData:
    folder = Path(folder)
    if not (folder / EVENTS).exists():
        raise SessionError(f"{folder} is not a recorded session (no {EVENTS})")
    try:
        records, report = read_records(folder / EVENTS)
    except OSError as exc:  # a link, a FIFO, too big, unreadable
        raise SessionError(f"cannot read {folder / EVENTS}: {exc.strerror or exc}") from None
    return SessionData(folder, read_meta(folder), records, report)


def rebuild_history(records: list[dict[str, Any]]) -> list[dict[str, str]]:
    """The agent history as recorded: message records, with history resets applied."""
    history: list[dict[str, str]] = []
    for record in records:
        kind = record.get("type")
        if record.get("subagent"):
            continue
        if kind == "message":
            history.append({"role": str(record["role"]), "content": str(record.get("content", ""))})
        elif kind == "history_reset":
            history = [
                {"role": str(m["role"]), "content": str(m.get("content", ""))}
                for m in record.get("messages", [])
            ]
    return history


class StepRun(StrEnum):
    """What became of a step's code: approval mode can edit or skip it, a policy refuse it."""

    AS_WRITTEN = "as_written"  # the model's code ran (or was about to)
    EDITED = "edited"  # the user's edit ran instead of the model's code
    SKIPPED = "skipped"  # the user skipped it: nothing ran
    REFUSED = "refused"  # a policy of the agent refused it: nothing ran


@dataclass
class RecordedStep:
    step: int
    reply: str | None = None  # the model's whole reply
    error: dict[str, Any] | None = None  # a model error that ended the turn
    code: str | None = None  # the code that ran (the user's edit, if any)
    outcome: dict[str, Any] | None = None  # execution_output / execution_error / security_error
    run: StepRun = StepRun.AS_WRITTEN
    proposed: str | None = None  # the model's code, when the user edited it
    refused_by: str | None = None  # the policy that refused the code (run is REFUSED)

    def add_code(self, record: dict[str, Any]) -> None:
        """Take a `code` record: the first is the model's, a later one the user's edit."""
        text = str(record.get("code") or record.get("content", ""))
        # Recordings made before `source` existed have the edit as a second code record.
        if record.get("source") == CodeSource.EDITED or self.code is not None:
            self.proposed = self.proposed if self.proposed is not None else self.code
            self.run = StepRun.EDITED
        self.code = text


@dataclass
class UserCell:
    """A cell the user ran directly (a `!` line), between turns."""

    cell: int
    code: str
    outcome: dict[str, Any] | None = None  # None: interrupted (or killed) before it finished
    seq: int = 0


@dataclass
class PolicyChange:
    """The user set the security policy (`/policy NAME`) between turns."""

    policy: str
    seq: int = 0


# Before a turn, in the order they happened: injection/load records, the user's cells and
# policy changes.
SetupItem = dict[str, Any] | UserCell | PolicyChange


def _setup_order(item: SetupItem) -> float:
    """Where *item* happened: an injection logged late (its hash) keeps its call's place."""
    if isinstance(item, UserCell | PolicyChange):
        return float(item.seq)
    if item.get("after_seq") is not None:
        return int(item["after_seq"]) + 0.5
    return float(item.get("seq") or 0)


@dataclass
class RecordedTurn:
    turn: int
    task: str
    steps: dict[int, RecordedStep] = field(default_factory=dict)
    status: str | None = None  # from turn_end; None if the process died mid-turn
    answer: dict[str, Any] | None = None  # the final_response record, if the turn had one
    setup: list[SetupItem] = field(default_factory=list)  # what happened before it, in order
    # The user's `/policy` during the turn: step -> the policy set before that step's code ran.
    policies: dict[int, str] = field(default_factory=dict)

    def step(self, n: int) -> RecordedStep:
        return self.steps.setdefault(n, RecordedStep(n))

    @property
    def ordered(self) -> list[RecordedStep]:
        return [self.steps[k] for k in sorted(self.steps)]


def _refuses(record: dict[str, Any], step: RecordedStep) -> bool:
    """An intervention that kept the step's code from running: a refusal, or a rewind
    before the cell (a rewind after a cell that ran follows its outcome)."""
    kind = record.get("kind")
    if kind == InterventionKind.REFUSE:
        return step.code is not None
    return kind == InterventionKind.REWIND and step.code is not None and step.outcome is None


def recorded_turns(data: SessionData) -> tuple[list[RecordedTurn], list[SetupItem]]:
    """The turns in order, and what happened after the last turn (injections, user cells).

    Each turn's `setup` holds the injections, loads, user cells and policy changes before
    it, in order; a policy changed during a turn goes to the step whose code came next.
    """
    turns: dict[int, RecordedTurn] = {}
    setup: dict[int, list[SetupItem]] = {}
    cells: dict[int, UserCell] = {}
    midturn: dict[int, list[tuple[dict[str, Any], PolicyChange]]] = {}  # by the turn it ran in
    for record in data.records:
        if record.get("subagent"):
            continue
        kind = record.get("type")
        if record.get("agent") == USER_AGENT:
            number = int(record.get("cell") or 0)
            if kind == "code":
                seq = int(record.get("seq") or 0)
                cell = UserCell(number, str(record.get("code", "")), seq=seq)
                cells[number] = cell  # the newest cell of that number: its outcome follows it
                before = int(record.get("before_turn") or max(turns, default=0) + 1)
                setup.setdefault(before, []).append(cell)
            elif kind in OUTCOME_TYPES and number in cells:
                cells[number].outcome = record
            continue
        if kind == RecordType.POLICY:
            change = PolicyChange(str(record["policy"]), int(record.get("seq") or 0))
            during = turns.get(int(record.get("turn") or 0))
            if during is not None and during.status is None:  # the turn runs: its next step
                midturn.setdefault(during.turn, []).append((record, change))
                continue
            logged = record.get("before_turn")
            placed = max(turns, default=0) + 1 if logged is None else int(logged)
            setup.setdefault(placed, []).append(change)
            continue
        if kind in ("injection", "load"):
            # `before_turn` places it (a background hash may log it a little late).
            logged = record.get("before_turn")
            placed = max(turns, default=0) + 1 if logged is None else int(logged)
            setup.setdefault(placed, []).append(record)
            continue
        turn_no = int(record.get("turn") or 0)
        if kind == "user":
            turns[turn_no] = RecordedTurn(turn_no, str(record.get("content", "")))
            continue
        turn = turns.get(turn_no)
        if turn is None:
            continue
        step_no = int(record.get("step") or 0)
        if kind == "reply":
            turn.step(step_no).reply = str(record.get("text", ""))
        elif kind == "error":
            turn.step(step_no).error = record
        elif kind == "code":
            turn.step(step_no).add_code(record)
            for _, change in midturn.pop(turn_no, []):  # set before this step's code ran
                turn.policies[step_no] = change.policy
        elif kind == "notice" and record.get("kind") == NoticeKind.CODE_SKIPPED:
            turn.step(step_no).run = StepRun.SKIPPED
        elif kind == "intervention" and _refuses(record, turn.step(step_no)):
            step = turn.step(step_no)
            step.run = StepRun.REFUSED
            step.refused_by = str(record.get("policy") or "") or None
        elif kind in OUTCOME_TYPES:
            turn.step(step_no).outcome = record
        elif kind == "final_response":
            turn.answer = record
        elif kind == "turn_end":
            turn.status = str(record.get("status"))
    for changes in midturn.values():  # no step ran after it in its turn: from the next on
        for record, change in changes:
            logged = record.get("before_turn")
            placed = int(record.get("turn") or 0) + 1 if logged is None else int(logged)
            setup.setdefault(placed, []).append(change)
    trailing: list[SetupItem] = []
    for before, records in sorted(setup.items()):
        records.sort(key=_setup_order)
        if before in turns:
            turns[before].setup = records
        else:
            trailing.extend(records)
    return [turns[k] for k in sorted(turns)], trailing
