"""Typed events streamed by `CaveAgent.stream_events`.

Front ends (the TUI, the plain REPL, `cave run --json`, the session recorder)
render these and nothing else: data flows one way, from the core to the view.
Every event carries its step index and, for sub-agents, the agent's name.
"""

from __future__ import annotations

import time
from abc import ABC
from dataclasses import asdict, dataclass, field, fields
from enum import Enum, StrEnum
from typing import TYPE_CHECKING, Any, cast

from cave_tui.agent.stop_reason import StatusType, StopReason

if TYPE_CHECKING:  # the event classes load without the models (front ends import them at start)
    from cave_tui.models.base import Usage

USER_AGENT = "user"  # `Event.agent` of code the user ran directly (`!` cells), not the model


class EventType(StrEnum):
    USER = "user"
    STEP = "step"
    TEXT = "text"
    CODE = "code"
    OUTPUT = "output"
    EXECUTION_OUTPUT = "execution_output"
    EXECUTION_ERROR = "execution_error"
    # Upstream's: a cell printed more than `max_exec_output`. Cave never emits it: it
    # keeps the head and tail of such output in an ordinary execution_output event.
    EXECUTION_OUTPUT_EXCEEDED = "execution_output_exceeded"
    SECURITY_ERROR = "security_error"
    FINAL_RESPONSE = "final_response"
    MAX_STEPS_REACHED = "max_steps_reached"
    RETRY = "retry"
    USAGE = "usage"
    ERROR = "error"
    CANCELLED = "cancelled"
    COMPACTING = "compacting"
    COMPACTED = "compacted"
    NOTICE = "notice"
    INTERVENTION = "intervention"
    STOPPED = "stopped"  # upstream 0.8's: the run has ended, always the stream's last event


TRANSIENT = "transient"  # field metadata: held by the live event, never recorded (to_dict)


@dataclass
class Event:
    type: EventType
    content: str = ""
    # keyword-only: an event is built as `Event(type, content)` (upstream 0.7's) or, for a
    # subclass, with 0.8's positional fields after `content` (`StoppedEvent(content,
    # stop_reason, steps, elapsed, usage)`); each subclass's `type` is keyword-only too
    step: int = field(default=0, kw_only=True)
    agent: str | None = field(default=None, kw_only=True)
    time: float = field(default_factory=time.time, kw_only=True)

    def to_dict(self) -> dict[str, Any]:
        """The event as JSON-able data; a field marked `TRANSIENT` (bytes) is left out."""
        data = asdict(self)
        data["type"] = self.type.value
        for spec in fields(self):
            if spec.metadata.get(TRANSIENT):
                del data[spec.name]
        return data


@dataclass
class UserEvent(Event):
    type: EventType = field(default=EventType.USER, kw_only=True)


@dataclass
class StepEvent(Event):
    """A model call is about to start (step is 1-based)."""

    type: EventType = field(default=EventType.STEP, kw_only=True)


@dataclass
class TextEvent(Event):
    """A chunk of the model's reply; several per reply. `content` is its prose (upstream's:
    the code comes as the `code` event); `raw` is the chunk as written, fences included."""

    type: EventType = field(default=EventType.TEXT, kw_only=True)
    raw: str = ""

    @property
    def written(self) -> str:
        """The chunk as the model wrote it (what a front end renders as the reply)."""
        return self.raw or self.content


class CodeSource(StrEnum):
    """Who wrote a CodeEvent's code (approval mode can replace the model's)."""

    MODEL = "model"  # the code block of the model's reply
    EDITED = "edited"  # approval mode: the user's edit of that block, which runs instead
    USER = "user"  # the user's own cell (a `!` line), run without the model


@dataclass
class CodeEvent(Event):
    """The code extracted from a reply, about to run as one cell.

    In approval mode an EDITED CodeEvent follows the MODEL one when the user changed it.
    `code` comes first, as in 0.8 (`CodeEvent("print(1)")`); `content` is the same code
    (0.7's field), and either given alone fills the other.
    """

    type: EventType = field(default=EventType.CODE, kw_only=True)
    content: str = field(default="", kw_only=True)
    code: str = ""
    source: CodeSource = CodeSource.MODEL

    def __post_init__(self) -> None:
        if not self.code:
            self.code = self.content
        elif not self.content:
            self.content = self.code


@dataclass
class OutputEvent(Event):
    """Output a running cell printed since the last one (`content`), streamed and throttled.

    `dropped` characters were printed before `content` but skipped (too much at once). The
    cell's ExecutionOutputEvent/ExecutionErrorEvent still carries its whole (bounded) output.
    """

    type: EventType = field(default=EventType.OUTPUT, kw_only=True)
    dropped: int = 0


class ExecutionResultEvent(ABC):  # noqa: B024 - a name to match on, nothing to implement
    """Upstream 0.8's one event for a cell's end: cave's ExecutionOutputEvent (`success`
    True) and ExecutionErrorEvent (False) are both instances of it, so `case
    ExecutionResultEvent()` matches either and reads `output` and `success`.

    Built as 0.8 builds it, `ExecutionResultEvent(output, success, persisted=False,
    persisted_variable=None, state_lost=False)` gives cave's event for that cell (its
    `content` and `output` are *output*), so a caller's event goes wherever cave's do."""

    __match_args__ = ("output", "success", "persisted", "persisted_variable", "state_lost")

    def __new__(
        cls,
        output: str,
        success: bool,
        persisted: bool = False,
        persisted_variable: str | None = None,
        state_lost: bool = False,
    ) -> ExecutionResultEvent:
        if persisted and persisted_variable is None:
            raise ValueError("persisted=True needs the name it is kept under (persisted_variable)")
        if persisted_variable is not None and not persisted:
            raise ValueError("persisted_variable is given only for a kept output (persisted=True)")
        text = str(output)
        event: ExecutionOutputEvent | ExecutionErrorEvent
        if success:
            event = ExecutionOutputEvent(content=text, output=text)
        else:
            event = ExecutionErrorEvent(content=text, output=text)
        event.persisted_variable = persisted_variable
        event.state_lost = state_lost
        return cast(ExecutionResultEvent, event)  # registered below: an instance of this ABC


@dataclass
class ExecutionOutputEvent(Event):
    """A cell finished without error. `content` is what it printed (upstream's); the text
    the model reads about it is `observation`."""

    type: EventType = field(default=EventType.EXECUTION_OUTPUT, kw_only=True)
    observation: str = ""
    output: str = ""
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)  # names the cell deleted
    duration: float = 0.0
    # The PNGs it displayed (runtime/figures.py), for a front end that shows images.
    figures: list[bytes] = field(default_factory=list, metadata={TRANSIENT: True})
    # Where the recorder saved them, relative to the session folder (session/figures.py).
    figure_files: list[str] = field(default_factory=list)
    # The same as paths to open now: set when they are saved, or when a session is resumed.
    saved_figures: list[str] = field(default_factory=list, metadata={TRANSIENT: True})
    # The width frames were printed at (the front end's log width): a replay prints at it.
    display_width: int | None = None
    # Its result is a frame the runtime holds under this name (runtime/shipped/results.py):
    # the log's entry opens it as a table. Live only: a later runtime holds other results.
    result_frame: str | None = field(default=None, metadata={TRANSIENT: True})
    # Upstream 0.8's: the name its output is kept under when too long for the model
    # (agent/persisted_output.py); the model read a `<persisted-output>` marker instead.
    persisted_variable: str | None = None
    # Upstream 0.8's: stopping the cell lost the namespace. Set only on an event a caller
    # built; cave reports a lost kernel as a NoticeEvent (`runtime_notice`). Not logged.
    state_lost: bool = field(default=False, metadata={TRANSIENT: True})

    @property
    def success(self) -> bool:
        """Upstream 0.8's `ExecutionResultEvent.success`: this cell finished without error."""
        return True

    @property
    def persisted(self) -> bool:
        """Upstream 0.8's: the output was kept in the namespace (`persisted_variable`)."""
        return self.persisted_variable is not None


@dataclass
class ExecutionErrorEvent(Event):
    """A cell failed. `content` is what it printed, then its error (upstream's stdout);
    the text the model reads about it (hints included) is `observation`. `interrupted`:
    the cell was stopped before its end (interrupted, timed out, or its kernel died)."""

    type: EventType = field(default=EventType.EXECUTION_ERROR, kw_only=True)
    observation: str = ""
    output: str = ""
    error: str = ""
    error_type: str = ""
    changed: list[str] = field(default_factory=list)
    deleted: list[str] = field(default_factory=list)  # names the cell deleted
    duration: float = 0.0
    timed_out: bool = False
    interrupted: bool = False
    # The figures it drew before it failed: shown and saved as a successful cell's are.
    figures: list[bytes] = field(default_factory=list, metadata={TRANSIENT: True})
    figure_files: list[str] = field(default_factory=list)
    saved_figures: list[str] = field(default_factory=list, metadata={TRANSIENT: True})
    # The width frames were printed at (the front end's log width): a replay prints at it.
    display_width: int | None = None
    persisted_variable: str | None = None  # as ExecutionOutputEvent's
    state_lost: bool = field(default=False, metadata={TRANSIENT: True})  # as theirs

    @property
    def success(self) -> bool:
        """Upstream 0.8's `ExecutionResultEvent.success`: this cell failed."""
        return False

    @property
    def persisted(self) -> bool:
        return self.persisted_variable is not None


ExecutionResultEvent.register(ExecutionOutputEvent)
ExecutionResultEvent.register(ExecutionErrorEvent)

CellResultEvent = ExecutionOutputEvent | ExecutionErrorEvent
"""A cell that ran, whether it succeeded or failed: either may carry figures."""


@dataclass
class ExecutionOutputExceededEvent(Event):
    """Upstream's event for too much output; defined for upstream code, never emitted."""

    type: EventType = field(default=EventType.EXECUTION_OUTPUT_EXCEEDED, kw_only=True)


@dataclass
class SecurityErrorEvent(Event):
    type: EventType = field(default=EventType.SECURITY_ERROR, kw_only=True)
    violations: list[dict[str, Any]] = field(default_factory=list)

    @property
    def message(self) -> str:
        """Upstream 0.8's name for the refusal's text."""
        return self.content


class AnswerSource(StrEnum):
    """Where a turn's answer came from, which tells a front end whether it was shown yet."""

    REPLY = "reply"  # a reply without code: its prose, already streamed as TextEvents
    FINAL_ANSWER = "final_answer"  # a cell called final_answer(): never streamed, show it


class AnswerSupport(StrEnum):
    """Whether a cell of the turn backs its answer (agent/turn.py `Turn.support`)."""

    CELL = "cell"  # the newest cell that ran succeeded (or the answer came from it)
    NO_CODE = "no_code"  # the turn sent no code: a reply from the conversation alone
    NONE = "none"  # code was sent, and no cell succeeded since the last failure


UNSUPPORTED_MARK = "⚠ not supported by a successful cell: this turn's code failed or did not run"


@dataclass
class FinalResponseEvent(Event):
    """The turn's answer. Front ends show `content` when `source` is FINAL_ANSWER, and
    `UNSUPPORTED_MARK` with it when `support` is NONE (never withheld, never delayed)."""

    type: EventType = field(default=EventType.FINAL_RESPONSE, kw_only=True)
    source: AnswerSource = AnswerSource.REPLY
    support: AnswerSupport = AnswerSupport.CELL

    @property
    def unsupported(self) -> bool:
        """No successful cell of the turn backs the answer: front ends mark it."""
        return self.support is AnswerSupport.NONE

    @property
    def unseen(self) -> bool:
        """The answer was not streamed as prose: a front end must render `content` itself."""
        return self.source is AnswerSource.FINAL_ANSWER


@dataclass
class MaxStepsReachedEvent(Event):
    type: EventType = field(default=EventType.MAX_STEPS_REACHED, kw_only=True)


@dataclass
class RetryEvent(Event):
    type: EventType = field(default=EventType.RETRY, kw_only=True)
    attempt: int = 0
    delay: float = 0.0


@dataclass
class UsageEvent(Event):
    """Usage of one model call, and the run's total so far."""

    type: EventType = field(default=EventType.USAGE, kw_only=True)
    prompt_tokens: int = 0
    completion_tokens: int = 0
    total_tokens: int = 0
    run_prompt_tokens: int = 0
    run_completion_tokens: int = 0
    reported: bool = True


@dataclass
class ErrorEvent(Event):
    type: EventType = field(default=EventType.ERROR, kw_only=True)
    kind: str = "error"


@dataclass
class CancelledEvent(Event):
    type: EventType = field(default=EventType.CANCELLED, kw_only=True)


class UpstreamStatusCounts:
    """Upstream 0.8's `StatusEvent.before`/`.after`: messages before and after a
    compaction, which cave does not report (its events count tokens): None."""

    @property
    def before(self) -> int | None:
        return None

    @property
    def after(self) -> int | None:
        return None


class UpstreamCompactionStatus(UpstreamStatusCounts):
    """Upstream 0.8's `StatusEvent` fields of a compaction event (cave_tui.events registers
    both compaction events as `StatusEvent`s)."""

    recovery: int | None = None
    max_recoveries: int | None = None


@dataclass
class CompactingEvent(UpstreamCompactionStatus, Event):
    type: EventType = field(default=EventType.COMPACTING, kw_only=True)
    tokens_before: int = 0

    @property
    def status(self) -> StatusType:
        """Upstream 0.8's `StatusEvent.status`."""
        return StatusType.COMPACTING


@dataclass
class CompactedEvent(UpstreamCompactionStatus, Event):
    type: EventType = field(default=EventType.COMPACTED, kw_only=True)
    tokens_before: int = 0
    tokens_after: int = 0
    tier: int = 0

    @property
    def status(self) -> StatusType:
        """Upstream 0.8's `StatusEvent.status`."""
        return StatusType.COMPACTED


class NoticeKind(StrEnum):
    """What a NoticeEvent tells, for consumers that act on it (never its text)."""

    INFO = "info"
    CODE_SKIPPED = "code_skipped"  # approval mode: the user skipped the step's code
    RUNTIME = "runtime"  # the runtime's report the model also reads (a kernel restart, …)
    KEPT_WORK = "kept_work"  # a turn ended short of its result: what it computed, and where


@dataclass
class NoticeEvent(Event):
    """Something the user should know that is not an error (continuation, runtime restart)."""

    type: EventType = field(default=EventType.NOTICE, kw_only=True)
    kind: NoticeKind = NoticeKind.INFO


@dataclass
class OutputRecoveryEvent(UpstreamStatusCounts, NoticeEvent):
    """A reply cut by the output limit is continued: the `recovery`-th continuation of
    at most `max_recoveries`. A NoticeEvent for cave's front ends and 0.7 callers;
    upstream 0.8's `StatusEvent(OUTPUT_RECOVERY)` for a 0.8 caller (`cave_tui.events`)."""

    recovery: int = 0
    max_recoveries: int = 0

    @property
    def status(self) -> StatusType:
        """Upstream 0.8's `StatusEvent.status`."""
        return StatusType.OUTPUT_RECOVERY


class InterventionKind(StrEnum):
    """What a policy's intervention does to the turn (agent/policies/)."""

    TIP = "tip"  # text added to the next request
    REFUSE = "refuse"  # a cell not run
    HINT = "hint"  # text added to a failed cell's observation
    KEEP = "keep"  # an object the user gave was rebound; its original is kept
    DOUBT = "doubt"  # an answer questioned before it is accepted
    REWIND = "rewind"  # failed exchanges left the model's context
    LEAD = "lead"  # the model's replies begun for it (a code fence), once shown per turn
    REWRITE = "rewrite"  # a cell run as a policy wrote it (the model's own code in its context)


@dataclass
class InterventionEvent(Event):
    """A policy acted on the turn: `content` is what the model was told."""

    type: EventType = field(default=EventType.INTERVENTION, kw_only=True)
    policy: str = ""
    kind: InterventionKind = InterventionKind.HINT


@dataclass
class StoppedEvent(Event):
    """The run has ended (upstream 0.8's): always the last event of `stream_events`, also
    when the run was cancelled or failed inside cave (the error is raised after it).
    `content` is the run's answer or last reply, as `AgentResponse.content`."""

    type: EventType = field(default=EventType.STOPPED, kw_only=True)
    stop_reason: StopReason = StopReason.COMPLETED
    steps: int = 0
    elapsed: float = 0.0
    usage: Usage = field(default_factory=lambda: _usage({}))

    def __post_init__(self) -> None:
        if isinstance(self.usage, dict):  # read back from a record (`event_from_dict`)
            self.usage = _usage(self.usage)


def _usage(counts: dict[str, Any]) -> Usage:
    """A `Usage` of *counts* (the models package loads here, on the first stop event)."""
    from cave_tui.models.base import Usage

    return Usage(**{k: int(v) for k, v in counts.items()})


EVENT_CLASSES: dict[EventType, type[Event]] = {
    cls.type: cls
    for cls in (
        UserEvent, StepEvent, TextEvent, CodeEvent, ExecutionOutputEvent, ExecutionErrorEvent,
        ExecutionOutputExceededEvent, SecurityErrorEvent, FinalResponseEvent,
        MaxStepsReachedEvent, RetryEvent, UsageEvent, ErrorEvent, CancelledEvent,
        CompactingEvent, CompactedEvent, NoticeEvent, InterventionEvent, StoppedEvent,
    )
}  # fmt: skip


def event_from_dict(data: dict[str, Any]) -> Event | None:
    """The event `Event.to_dict()` (or a session record) holds; None for other records."""
    value = data.get("type")
    if not isinstance(value, str):
        return None
    try:
        kind = EventType(value)
    except ValueError:
        return None
    cls = EVENT_CLASSES[kind]
    kwargs: dict[str, Any] = {}
    for spec in fields(cls):
        if spec.name == "type" or spec.name not in data:
            continue
        value = data[spec.name]
        if isinstance(spec.default, Enum):  # a typed field (source, kind): back to its enum
            try:
                value = type(spec.default)(value)
            except ValueError:
                continue  # a value this version does not know: the default stands
        kwargs[spec.name] = value
    return cls(**kwargs)


def runtime_notice(result: Any, step: int = 0, agent: str | None = None) -> Event | None:
    """The notice for the user of what the runtime reported with a cell's result (a kernel
    restarted while idle or after the cell, state lost): the model reads it too."""
    if not result.notice:
        return None
    return NoticeEvent(content=str(result.notice), step=step, agent=agent, kind=NoticeKind.RUNTIME)


def violation_dict(v: Any) -> dict[str, Any]:
    return {
        "rule": str(getattr(v, "rule", "")),
        "message": str(getattr(v, "message", v)),
        "lineno": getattr(v, "lineno", None),
        "col": getattr(v, "col", getattr(v, "col_offset", None)),
    }


def typed(event: Event) -> Event:
    """*event* as its own class, for front ends that match on classes: code written for
    upstream builds bare `Event(EventType.TEXT, "...")`. An event of a subclass, or one whose
    class needs more than its content, is returned as it is."""
    if type(event) is not Event:
        return event
    cls = _CLASS_OF.get(event.type)
    if cls is None:
        return event
    try:
        # every subclass defaults its `type`, which the base requires
        return cls(content=event.content, step=event.step, agent=event.agent, time=event.time)  # type: ignore[call-arg]
    except TypeError:  # a class with required fields of its own
        return event


def _classes() -> dict[EventType, type[Event]]:
    found: dict[EventType, type[Event]] = {}
    for cls in Event.__subclasses__():
        default = next((f.default for f in fields(cls) if f.name == "type"), None)
        if isinstance(default, EventType):
            found.setdefault(default, cls)
    return found


_CLASS_OF = _classes()
