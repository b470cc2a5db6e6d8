"""Getting a model out of a failing turn: a rewind.

A small model that has written failing code once tends to copy its own last reply,
even when the observation names the fix and even when sampled (measured in
docs/prompt-tuning.md). A *rewind* removes the failed exchanges of the turn from
history and puts what was learned from them (each error's traceback lines and
hints, not the model's replies) under the user's request, so the next reply is
written fresh.
The runtime keeps whatever the failed cells defined; the event stream and the
session keep the whole story: only the model's context is rewound.
Doubting an answer before it is accepted is in answer_checks.py.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cave_tui.agent.observation import compact_traceback, cut_middle
from cave_tui.runtime.base import ExecutionResult

MAX_REWINDS = 2  # per turn; after that the failures stay in context as they were
SUMMARY_CHARS = 1200  # of one failure, in the rewound request

REWIND_HEADER = "An earlier attempt at this request failed:"
REWIND_FOOTER = "Write the code for the request again, so that it avoids that error."


def failure_summary(result: ExecutionResult, hints: Sequence[str] = ()) -> str:
    """What a failed cell taught, to keep across a rewind: its error and the hints.

    Built from the result itself: what the cell printed before failing, the names it
    changed and the loop notes are left out (they describe exchanges the model will no
    longer see). Within SUMMARY_CHARS.
    """
    if result.blocked:
        lines = ["Blocked by the security policy:"]
        lines += [f"- {violation}" for violation in result.security_violations]
    else:
        error = compact_traceback((result.error_text or "error").rstrip("\n"))
        lines = [line for line in error.splitlines() if line.strip() and line != "Traceback:"]
    lines += [f"Hint: {hint}" for hint in hints]
    return cut_middle("\n".join(lines), SUMMARY_CHARS)


def rewound_request(task: str, failures: Iterable[str]) -> str:
    """The user's request followed by what the failed attempts taught."""
    notes = [note for note in dict.fromkeys(failures) if note]  # distinct, in order
    if not notes:
        return task
    body = "\n".join(notes[-2:])  # the latest two: more is noise for a small model
    return f"{task}\n\n{REWIND_HEADER}\n{body}\n{REWIND_FOOTER}"
