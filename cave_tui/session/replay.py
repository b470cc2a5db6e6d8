"""Replay: run a recorded session again, with the recorded model replies, on a fresh runtime.

The recorded replies feed a `ScriptedModel` (one per turn, so a turn that was cut
short cannot shift the next turn's replies); the code really runs again against
the same data (injected files are checked by sha256, package data sets by a hash
of their contents). With `check`, every cell's output is compared with the
recording and each difference is reported as a unified diff (difflib).
"""

from __future__ import annotations

import asyncio
import difflib
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.session.reader import (
    PolicyChange,
    RecordedStep,
    RecordedTurn,
    SetupItem,
    StepRun,
    UserCell,
    read_session,
    recorded_turns,
)
from cave_tui.session.store import SessionError

# The events that end a step: what replay compares with the recording.
OUTCOME_EVENTS = (ev.ExecutionOutputEvent, ev.ExecutionErrorEvent, ev.SecurityErrorEvent)

_ADDRESS = re.compile(r"\b0x[0-9a-fA-F]{6,}\b")
_CELL_NAME = re.compile(r"<ipython-input-\d+-[0-9a-f]+>")
DEFAULT_PAUSE = 0.6  # seconds between steps at speed 1


class ReplayError(SessionError):
    """The replay could not start or go on (data changed, a file is missing, …)."""


def normalize_output(text: str) -> str:
    """Output as compared: trailing spaces, memory addresses and cell file names do not count."""
    lines = [line.rstrip() for line in (text or "").strip("\n").splitlines()]
    return _CELL_NAME.sub("<cell>", _ADDRESS.sub("0x…", "\n".join(lines)))


def _error_line(record: dict[str, Any]) -> str:
    error = str(record.get("error") or "").strip().splitlines()
    return error[-1] if error else ""


def outcome_text(record: dict[str, Any] | None) -> str:
    """The comparable text of a step's outcome record (or replayed event dict)."""
    if record is None:
        return "(no output: the step did not run)"
    kind = record.get("type")
    if kind == "execution_output":
        return normalize_output(str(record.get("output", "")))
    if kind == "execution_error":
        output = normalize_output(str(record.get("output", "")))
        head = f"{output}\n" if output else ""
        return f"{head}[{record.get('error_type')}] {normalize_output(_error_line(record))}"
    if kind == "security_error":
        rules = sorted(str(v.get("rule")) for v in record.get("violations", []))
        return f"[blocked by the security policy: {', '.join(rules)}]"
    return f"[{kind}]"


def _checks_answer(turn: RecordedTurn) -> bool:
    """The turn ended with final_answer(): its answer was computed, so replay compares it."""
    return turn.answer is not None and turn.answer.get("source") == ev.AnswerSource.FINAL_ANSWER


def _compare_answer(turn: RecordedTurn, replayed: ev.Event | None) -> Divergence | None:
    if not _checks_answer(turn):
        return None
    assert turn.answer is not None
    recorded = normalize_output(str(turn.answer.get("content", "")))
    again = "(no final answer)" if replayed is None else normalize_output(replayed.content)
    if recorded == again:
        return None
    step = int(turn.answer.get("step") or 0)
    return Divergence(turn.turn, step, recorded, again, what="final answer")


@dataclass
class Divergence:
    turn: int
    step: int
    recorded: str
    replayed: str
    what: str = "output"
    cell: int | None = None  # a user cell (`!`), not a step of the agent

    @property
    def where(self) -> str:
        if self.cell is not None:
            return f"user cell {self.cell}"
        return f"turn {self.turn}, step {self.step}"

    def diff(self) -> str:
        lines = difflib.unified_diff(
            self.recorded.splitlines(),
            self.replayed.splitlines(),
            fromfile=f"recorded ({self.where})",
            tofile=f"replayed ({self.where})",
            lineterm="",
        )
        return f"{self.what} differs at {self.where}:\n" + "\n".join(lines)


@dataclass
class ReplayResult:
    session: Path
    turns: int = 0
    steps: int = 0
    cells: int = 0  # the user's own cells run again
    compared: int = 0
    divergences: list[Divergence] = field(default_factory=list)
    agent: Any = None
    runtime: Any = None

    @property
    def ok(self) -> bool:
        return not self.divergences

    def report(self) -> str:
        if self.ok:
            cells = f"{self.cells} user cells, " if self.cells else ""
            return (
                f"replay of {self.session.name} matches the recording: {self.turns} turns, "
                f"{self.steps} steps, {cells}{self.compared} outputs compared"
            )
        head = (
            f"replay of {self.session.name} DIVERGED in {len(self.divergences)} of "
            f"{self.compared} compared outputs"
        )
        return head + "\n\n" + "\n\n".join(d.diff() for d in self.divergences)


async def redo_setup(record: dict[str, Any], runtime: Any, *, trust: bool = False) -> list[str]:
    """Repeat one recorded injection or load on *runtime*, checking the data is the same."""
    from cave_tui.dataio.dump import MANIFEST, load_dump, resolve_dump_dir
    from cave_tui.dataio.errors import DataIOError
    from cave_tui.dataio.inject import inject_file, inject_lazy, inject_package
    from cave_tui.dataio.load import file_sha256

    if record.get("type") == "load":
        folder = resolve_dump_dir(record["path"])
        expected = record.get("manifest_sha256")
        if expected and file_sha256(folder / MANIFEST) != expected:
            raise ReplayError(f"the dump {folder} changed since the recording (manifest sha256)")
        dump = await load_dump(runtime, folder, trust=trust)
        return list(dump.names)
    source = record.get("source") or {}
    name = record["name"]
    if source.get("kind") == "package":
        spec = f"pkg:{source['module']}.{source['attr']}"
        injection = await inject_package(runtime, spec, name, allow_shadow=True)
        want, got = source.get("sha256"), injection.source.get("sha256")
        if want and got != want:
            raise ReplayError(
                f"{spec} (package {source.get('package')} {injection.source.get('version')}) "
                f"holds different data than when recorded with version {source.get('version')}"
            )
        return [name]
    path = Path(str(source.get("path", "")))
    if source.get("lazy"):  # a lazy frame over a file, a folder or a glob: bound lazily again
        try:
            await inject_lazy(runtime, path, name, allow_shadow=True, engine=str(source["lazy"]))
        except DataIOError as exc:
            raise ReplayError(f"replay needs the lazily injected {path}: {exc}") from None
        return [name]
    if not path.is_file():
        raise ReplayError(f"replay needs the injected file {path}, which is missing")
    want = source.get("sha256")
    if want and file_sha256(path) != want:
        raise ReplayError(f"{path} changed since the recording (sha256 differs); not replaying")
    await inject_file(
        runtime,
        path,
        name,
        trust=trust,
        allow_shadow=True,
        fmt=source.get("format"),
        encoding=source.get("encoding"),
        sep=source.get("sep"),
        sheet=source.get("sheet"),
    )
    return [name]


async def _redo(
    items: list[SetupItem],
    runtime: Any,
    result: ReplayResult,
    render: Callable[[ev.Event], None] | None,
    trust: bool,
) -> None:
    """Repeat what happened before a turn, in order: injections, loads, the user's cells.

    A user cell runs again and its output is compared; one cut short is not run.
    """
    from cave_tui.session.user_cells import code_event, run_user_cell

    for item in items:
        if isinstance(item, PolicyChange):
            set_policy(runtime, item.policy)
            if render is not None:
                render(ev.NoticeEvent(content=f"(the security policy was set to {item.policy})"))
            continue
        if not isinstance(item, UserCell):
            await redo_setup(item, runtime, trust=trust)
            continue
        if item.outcome is None:
            continue
        if render is not None:
            render(code_event(item))
        use_recorded_width(runtime, item.outcome)
        event = await run_user_cell(item, runtime)
        if render is not None:
            render(event)
        result.cells += 1
        result.compared += 1
        divergence = _compare(RecordedStep(0, outcome=item.outcome), event.to_dict())
        if divergence is not None:
            divergence.cell = item.cell
            result.divergences.append(divergence)


FINISHED = ("completed", "max_steps_reached", "error")


def replayable_steps(turn: RecordedTurn) -> list[RecordedStep]:
    """The steps to replay: all of them, or for a turn cut short, those that finished.

    A step whose code was still running when the process died (or the user
    interrupted it) has no recorded outcome: it is not replayed.
    """
    steps = turn.ordered
    if turn.status in FINISHED:
        return steps
    done = [i for i, s in enumerate(steps) if s.outcome is not None]
    return steps[: done[-1] + 1] if done else []


def use_recorded_width(runtime: Any, outcome: dict[str, Any] | None) -> None:
    """Print the next cell's frames at the width they were recorded at (a session recorded
    before widths were kept printed at the default), so `--check` compares like with like."""
    from cave_tui.runtime.base import Runtime
    from cave_tui.runtime.shipped.display_options import DEFAULT_WIDTH

    width = (outcome or {}).get("display_width")
    if isinstance(runtime, Runtime):
        runtime.set_display_width(width if isinstance(width, int) else DEFAULT_WIDTH)


def checker_for(policy: str | None, *, sandboxed: bool = False) -> Any:
    """The security checker the recording ran under, so blocked cells are blocked again
    (*sandboxed*: replayed into a sandboxed kernel, which has the lighter guard)."""
    if not policy or policy in ("trusted", "custom"):
        return None
    try:
        from cave_tui.security import SecurityChecker

        return SecurityChecker.for_policy(policy, sandboxed=sandboxed)
    except (ImportError, AttributeError, ValueError):
        return None


def set_policy(runtime: Any, policy: str) -> None:
    """Set the recorded policy change on *runtime* (ReplayError for a policy not known here)."""
    from cave_tui.security.policies import POLICIES

    if policy not in POLICIES:
        raise ReplayError(f"the session set an unknown security policy {policy!r}")
    sandboxed = getattr(runtime, "sandbox", False) is True
    runtime.security_checker = checker_for(policy, sandboxed=sandboxed)


def _replies(steps: list[RecordedStep]) -> list[Any]:
    from cave_tui.models.base import ModelError

    replies: list[Any] = []
    for step in steps:
        if step.reply is not None:
            replies.append(step.reply)
        elif step.error is not None:
            replies.append(
                ModelError(str(step.error.get("content", "")), kind=str(step.error.get("kind")))
            )
            break
    return replies


class RecordedApprovals:
    """The replay agent's approval hook: each step runs what ran when it was recorded.

    A step the user edited runs the edit, a skipped step is skipped again, any other
    runs the model's code; a `/policy` the user set during the turn is set again before
    the step it preceded. `on_event` (an event sink) tracks which step is asking.
    """

    def __init__(
        self,
        set_policy: Callable[[str], None] | None = None,
        set_width: Callable[[dict[str, Any] | None], None] | None = None,
    ) -> None:
        self.steps: dict[int, RecordedStep] = {}
        self.policies: dict[int, str] = {}  # the turn's `/policy` changes, by step
        self._set_policy = set_policy
        self._set_width = set_width  # the step's recorded display width, from its outcome
        self._step = 0

    def on_event(self, event: ev.Event) -> None:
        if event.type is ev.EventType.CODE and event.agent is None:
            self._step = event.step

    async def __call__(self, code: str) -> str | None:
        policy = self.policies.get(self._step)
        if policy is not None and self._set_policy is not None:  # set while the turn ran
            self._set_policy(policy)
        recorded = self.steps.get(self._step)
        if self._set_width is not None:
            self._set_width(recorded.outcome if recorded is not None else None)
        if recorded is None or recorded.run is StepRun.AS_WRITTEN:
            return code
        if recorded.run is StepRun.SKIPPED:
            return None
        return recorded.code


def _compare(step: RecordedStep, replayed: dict[str, Any] | None) -> Divergence | None:
    recorded_text = outcome_text(step.outcome)
    replayed_text = outcome_text(replayed)
    recorded_kind = (step.outcome or {}).get("type")
    replayed_kind = (replayed or {}).get("type")
    if recorded_text == replayed_text and recorded_kind == replayed_kind:
        return None
    return Divergence(0, step.step, recorded_text, replayed_text)


async def replay_session(
    session: str | Path,
    *,
    runtime: Any = None,
    render: Callable[[ev.Event], None] | None = None,
    speed: float = 1.0,
    pause: float | None = None,
    trust: bool = False,
    max_steps: int | None = None,
) -> ReplayResult:
    """Replay *session* into *runtime* (a fresh `IPythonRuntime` by default).

    Returns a `ReplayResult` whose `divergences` list every output that differs;
    the agent and runtime are left alive for the caller (the demo continues live).
    *pause* seconds (default 0.6/speed when rendering, else 0) separate steps.
    """
    from cave_tui.agent import CaveAgent
    from cave_tui.models import ScriptedModel
    from cave_tui.runtime.base import Runtime

    data = read_session(session)
    turns, trailing = recorded_turns(data)
    if not turns and not any(isinstance(item, UserCell) for item in trailing):
        raise ReplayError(f"{data.dir} has no recorded turns or cells to replay")
    if runtime is None:
        from cave_tui.runtime.ipython import IPythonRuntime

        runtime = IPythonRuntime(security_checker=checker_for(data.meta.get("policy")))
    longest = max((max(t.steps, default=0) for t in turns), default=1)
    steps_allowed = max_steps or int(data.meta.get("max_steps") or 0) or max(longest, 10)
    approvals = RecordedApprovals(
        lambda policy: set_policy(runtime, policy),
        lambda outcome: use_recorded_width(runtime, outcome),
    )
    agent = CaveAgent(
        ScriptedModel([], model_id=f"replay:{data.id}"),
        runtime,
        max_steps=steps_allowed,
        name=None,
        approve=approvals,
        display=False,
        policies=recorded_policies(data.meta),
    )
    agent.add_event_sink(approvals.on_event)
    result = ReplayResult(data.dir, agent=agent, runtime=runtime)
    width = runtime.display_width if isinstance(runtime, Runtime) else None
    if pause is None:
        pause = DEFAULT_PAUSE / speed if render is not None and speed > 0 else 0.0
    for turn in turns:
        await _redo(turn.setup, runtime, result, render, trust)
        steps = replayable_steps(turn)
        approvals.steps = {step.step: step for step in steps}
        approvals.policies = dict(turn.policies)
        finished = turn.status in FINISHED
        agent.model = ScriptedModel(_replies(steps), model_id=f"replay:{data.id}")
        outcomes: dict[int, dict[str, Any]] = {}
        status = None
        answer: ev.Event | None = None
        last_step = steps[-1].step if steps else 0
        result.turns += 1
        if not steps and not finished:
            if render is not None:
                render(ev.UserEvent(content=turn.task))
                render(ev.NoticeEvent(content="(this turn was cut short before a step finished)"))
            continue
        events = agent.stream_events(turn.task)
        async for event in events:
            if render is not None:
                render(event)
            if isinstance(event, OUTCOME_EVENTS):
                outcomes[event.step] = event.to_dict()
                if pause:
                    await asyncio.sleep(pause)
                if not finished and event.step >= last_step:
                    if render is not None:
                        render(ev.NoticeEvent(content=f"(turn {turn.turn} was cut short here)"))
                    break
            elif event.type is ev.EventType.FINAL_RESPONSE:
                status = "completed"
                answer = event
            elif event.type is ev.EventType.MAX_STEPS_REACHED:
                status = "max_steps_reached"
            elif event.type is ev.EventType.ERROR:
                status = "error"
        await events.aclose()
        for step in steps:
            if step.outcome is None and step.step not in outcomes:
                continue
            result.steps += 1
            result.compared += 1
            divergence = _compare(step, outcomes.get(step.step))
            if divergence is not None:
                divergence.turn = turn.turn
                result.divergences.append(divergence)
        extra = sorted(set(outcomes) - {s.step for s in steps})
        for step_no in extra:
            result.divergences.append(
                Divergence(turn.turn, step_no, "(no such step)", outcome_text(outcomes[step_no]))
            )
        divergence = _compare_answer(turn, answer)
        if divergence is not None:
            result.compared += 1
            result.divergences.append(divergence)
        elif _checks_answer(turn):
            result.compared += 1
        if turn.status in ("completed", "max_steps_reached") and status != turn.status:
            result.divergences.append(
                Divergence(turn.turn, 0, str(turn.status), str(status), what="turn status")
            )
    await _redo(trailing, runtime, result, render, trust)
    agent.approve = None  # the agent may go on live (`continue_from`): no recorded steps
    if width is not None:  # live cells print at the front end's width again
        runtime.set_display_width(width)
    return result


def recorded_policies(meta: dict[str, Any]) -> list[str] | None:
    """The built-in policies a session ran with (None: not recorded, the default preset);
    a policy of the user's own, unknown here, is left out of the replay."""
    from cave_tui.agent.policies import POLICY_NAMES

    names = meta.get("policies")
    if not isinstance(names, list):
        return None
    return [name for name in names if name in POLICY_NAMES]
