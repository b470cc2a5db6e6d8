"""What a record of a session log may hold: its type, and the types of the fields cave reads.

`record_problem(record)` says why a record read from `events.jsonl` cannot be used (a hand
edit, a line another program wrote: wrong types, missing keys, an unknown type), or None.
`read_records` skips such records and names their lines, so no reader (resume, replay,
export, the transcript) meets a value of a type it does not expect.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from enum import Enum, StrEnum
from typing import Any

from cave_tui.agent.events import EVENT_CLASSES, EventType


class RecordType(StrEnum):
    """The records the recorder writes besides the agent's events (`EventType`)."""

    SESSION = "session"
    MESSAGE = "message"
    HISTORY_RESET = "history_reset"
    REPLY = "reply"
    INJECTION = "injection"
    LOAD = "load"
    RETRIEVAL = "retrieval"
    SNAPSHOT = "snapshot"
    SNAPSHOT_FAILED = "snapshot_failed"  # a snapshot could not be written (why: `reason`)
    TURN_END = "turn_end"
    RESUME = "resume"
    CLOSED = "closed"
    POLICY = "policy"  # the user set the security policy (`/policy NAME`): replay applies it


SNAPSHOT_SEQ = "log_seq"  # in a snapshot's manifest: the last log record it holds the effect of
# ... and the last one logged before its values were all read: a background snapshot may
# or may not hold the effect of the records between the two.
SNAPSHOT_READ_SEQ = "read_seq"
ROLES = frozenset({"system", "user", "assistant", "tool"})
Check = Callable[[Any], bool]


def _int(value: Any) -> bool:
    return type(value) is int


def _number(value: Any) -> bool:
    return type(value) in (int, float)


def _text(value: Any) -> bool:
    return isinstance(value, str)


def _maybe(check: Check) -> Check:
    return lambda value: value is None or check(value)


def _names(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def _message(value: Any) -> bool:
    return (
        isinstance(value, dict)
        and value.get("role") in ROLES
        and isinstance(value.get("content", ""), str | None)
    )


def _messages(value: Any) -> bool:
    return isinstance(value, list) and all(_message(m) for m in value)


# The fields cave reads from records, wherever they appear, and what each must be.
FIELDS: dict[str, tuple[Check, str]] = {
    "type": (_text, "a string"),
    "seq": (_int, "an integer"),
    "t": (_number, "a number"),
    "turn": (_int, "an integer"),
    "step": (_int, "an integer"),
    "cell": (_int, "an integer"),
    "before_turn": (_maybe(_int), "an integer"),
    "after_seq": (_maybe(_int), "an integer"),
    "agent": (_maybe(_text), "a string"),
    "subagent": (lambda v: isinstance(v, bool), "true or false"),
    "role": (lambda v: v in ROLES, "one of " + ", ".join(sorted(ROLES))),
    "content": (_maybe(_text), "a string"),
    "text": (_maybe(_text), "a string"),
    "code": (_maybe(_text), "a string"),
    "name": (_text, "a string"),
    "path": (_text, "a string"),
    "status": (_maybe(_text), "a string"),
    "kind": (_maybe(_text), "a string"),
    "changed": (_names, "a list of names"),
    "deleted": (_names, "a list of names"),
    "names": (_names, "a list of names"),
    "restored": (_names, "a list of names"),
    "source": (lambda v: isinstance(v, str | dict), "a string or a mapping"),
}
# Fields whose meaning depends on the record's type.
TYPED_FIELDS: dict[str, dict[str, tuple[Check, str]]] = {
    RecordType.HISTORY_RESET: {"messages": (_messages, "a list of messages ({role, content})")},
    RecordType.RESUME: {"messages": (_int, "an integer")},
    RecordType.POLICY: {"policy": (_text, "a string")},
}
REQUIRED: dict[str, tuple[str, ...]] = {
    RecordType.MESSAGE: ("role",),
    RecordType.HISTORY_RESET: ("messages",),
    RecordType.INJECTION: ("name",),
    RecordType.LOAD: ("path", "names"),
    RecordType.RETRIEVAL: ("name",),
    RecordType.POLICY: ("policy",),
}
KNOWN = frozenset(RecordType) | frozenset(EventType)


def _event_field_problem(record: dict[str, Any], kind: EventType) -> str | None:
    """A field of the event's dataclass whose value is not of its default's type."""
    for spec in dataclasses.fields(EVENT_CLASSES[kind]):
        if spec.name in FIELDS or spec.name not in record:
            continue
        if spec.default is not dataclasses.MISSING:
            default = spec.default
        elif spec.default_factory is not dataclasses.MISSING:
            default = spec.default_factory()
        else:
            continue
        value = record[spec.name]
        if default is None:
            continue
        if isinstance(default, Enum):
            expected: type | tuple[type, ...] = str
        elif isinstance(default, bool):
            expected = bool
        elif isinstance(default, float):
            expected = (int, float)
        else:
            expected = type(default)
        if not isinstance(value, expected) or (expected is int and isinstance(value, bool)):
            return f"{spec.name} is not of type {type(default).__name__}"
    return None


def record_problem(record: Any) -> str | None:
    """Why *record* (one parsed line of `events.jsonl`) cannot be used, or None."""
    if not isinstance(record, dict):
        return "not a JSON object"
    kind = record.get("type")
    if kind is None:
        return "no type"
    if kind not in KNOWN:
        return f"unknown type {kind!r}" if isinstance(kind, str) else "type is not a string"
    for key in REQUIRED.get(kind, ()):
        if key not in record:
            return f"no {key}"
    typed = TYPED_FIELDS.get(kind, {})
    for key, value in record.items():
        rule = typed.get(key) or FIELDS.get(key)
        if rule is not None and not rule[0](value):
            return f"{key} is not {rule[1]}"
    if kind in EventType.__members__.values():
        return _event_field_problem(record, EventType(kind))
    return None
