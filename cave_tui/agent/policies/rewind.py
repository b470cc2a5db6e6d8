"""Rewind: a failing turn's failed exchanges leave the model's context.

A small model that has written failing code once tends to copy its own last reply,
even when the observation names the fix (docs/prompt-tuning.md). After two failures
in a row, a resend of failed code or a made-up answer after a failure, the failed
exchanges leave history and what they taught (each error and its hints, not the
model's code) goes under the user's request. The exchanges of cells that ran without
error stay, and the request names what they stored. The runtime, the event stream
and the session keep everything: only the model's context is rewound.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from cave_tui.agent.observation import compact_traceback, cut_middle
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.not_done import gives_up
from cave_tui.agent.policies.resend import resent_failure, worth_rerunning
from cave_tui.agent.turn import CellRecord, Turn
from cave_tui.runtime.base import ExecutionResult

MAX_REWINDS = 2  # per turn; after that the failures stay in context as they were
SUMMARY_CHARS = 1200  # of one failure, in the rewound request

REWIND_HEADER = "An earlier attempt at this request failed:"
REWIND_FOOTER = "Write the code for the request again, so that it avoids that error."
REWIND_NOTICE = "failed attempts left the model's context; it retries with their errors noted"


def failure_summary(result: ExecutionResult, hints: Sequence[str] = ()) -> str:
    """What a failed cell taught, to keep across a rewind: its error and the hints.

    What the cell printed, the names it changed and the loop notes are left out (they
    describe exchanges the model will no longer see). Within SUMMARY_CHARS.
    """
    if result.blocked:
        lines = ["Blocked by the security policy:"]
        lines += [f"- {violation}" for violation in result.security_violations]
    else:
        error = compact_traceback((result.error_text or "error").rstrip("\n"))
        lines = [line for line in error.splitlines() if line.strip() and line != "Traceback:"]
    lines += [f"Hint: {hint}" for hint in hints]
    return cut_middle("\n".join(lines), SUMMARY_CHARS)


def rewound_request(task: str, failures: Iterable[str], kept: Iterable[str] = ()) -> str:
    """The user's request, what the failed attempts taught, and the names kept from the
    cells that ran without error."""
    notes = [note for note in dict.fromkeys(failures) if note]  # distinct, in order
    names = list(dict.fromkeys(kept))
    if not notes:
        return task
    body = "\n".join(notes[-2:])  # the latest two: more is noise for a small model
    stored = ""
    if names:
        listed = ", ".join(f"`{name}`" for name in names)
        stored = (
            f"\nThe cells of this request that ran without error are kept; they stored {listed}."
        )
    return f"{task}\n\n{REWIND_HEADER}\n{body}{stored}\n{REWIND_FOOTER}"


def _request(turn: Turn, failed: Iterable[CellRecord]) -> str:
    summaries = [failure_summary(c.result, c.hints) for c in failed]
    stored = [n for c in turn.cells if c.ok for n in c.result.changed]
    return rewound_request(turn.task, summaries, stored)


class Rewind(BasePolicy):
    """After two failures in a row, a resent failure or a made-up answer after one, the
    failed exchanges leave the context and their errors are noted under the request."""

    name = "rewind"

    def _possible(self, turn: Turn) -> bool:
        return turn.rewinds < MAX_REWINDS and any(c.failed for c in turn.cells)

    def _rewind(self, turn: Turn, resample: bool = False) -> Intervention:
        failed = [c for c in turn.cells if c.failed]
        request = _request(turn, failed)
        return self.act(InterventionKind.REWIND, REWIND_NOTICE, request=request, resample=resample)

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        if not self._possible(turn):
            return None
        resent = resent_failure(turn, code) is not None and not worth_rerunning(turn, code)
        if resent or gives_up(turn, code):
            return self._rewind(turn, resample=resent)
        return None

    async def after_cell(self, turn: Turn, cell: CellRecord) -> Intervention | None:
        if cell.failed and turn.failed_in_row >= 2 and self._possible(turn):
            return self._rewind(turn)
        return None
