"""What became of a recorded cell, as an export needs it: ran, raised, cut short or not run.

An exported notebook runs again only the cells that ran to their end in the session
(a cell that raised runs again, tagged `raises-exception`); a cell cut short (timed out,
interrupted, its kernel died) or never run (blocked, refused, skipped, the runtime busy)
is shown, not run.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import StrEnum
from typing import Any

from cave_tui.runtime.failures import RuntimeFailure
from cave_tui.session.reader import StepRun

RAISES_TAG = "raises-exception"  # nbclient runs on past a cell with this tag that raises


class CellFate(StrEnum):
    RAN = "ran"  # ran to its end without an error
    RAISED = "raised"  # ran, and its code raised an exception
    CUT_SHORT = "cut_short"  # stopped before its end: timed out, interrupted, kernel died
    NOT_RUN = "not_run"  # never ran: blocked, refused by a policy, skipped, runtime busy


@dataclass(frozen=True)
class Fate:
    """A recorded cell's fate and, for one shown instead of run, why (Markdown)."""

    kind: CellFate
    reason: str = ""

    @property
    def runs(self) -> bool:
        """The exported cell is code that runs again."""
        return self.kind in (CellFate.RAN, CellFate.RAISED)


def _runtime_failure(outcome: dict[str, Any]) -> RuntimeFailure | None:
    try:
        return RuntimeFailure(str(outcome.get("error_type") or ""))
    except ValueError:
        return None


def cell_fate(
    outcome: dict[str, Any] | None, run: StepRun = StepRun.AS_WRITTEN, policy: str | None = None
) -> Fate:
    """The fate of a cell from its outcome record (None: no outcome was recorded)."""
    if run is StepRun.SKIPPED:
        return Fate(CellFate.NOT_RUN, "the user skipped this code; it did not run")
    if run is StepRun.REFUSED:
        by = f"the `{policy}` policy" if policy else "a policy of the agent"
        return Fate(CellFate.NOT_RUN, f"{by} refused this code; it did not run")
    if outcome is None:
        return Fate(
            CellFate.CUT_SHORT,
            "this code was still running when the session was interrupted, so it is not run here",
        )
    kind = outcome.get("type")
    if kind == "execution_output":
        return Fate(CellFate.RAN)
    if kind == "security_error":
        return Fate(CellFate.NOT_RUN, "the security policy blocked this code; it did not run")
    if kind != "execution_error":
        return Fate(CellFate.NOT_RUN, f"this code did not run ({kind})")
    failure = _runtime_failure(outcome)
    if failure is not None and not failure.started:
        return Fate(CellFate.NOT_RUN, "the runtime could not run this code; it did not run")
    if outcome.get("timed_out"):
        return Fate(CellFate.CUT_SHORT, "this code timed out in the session, so it is not run here")
    if outcome.get("interrupted") or failure is not None:
        return Fate(
            CellFate.CUT_SHORT,
            "this code was stopped before its end in the session, so it is not run here",
        )
    return Fate(CellFate.RAISED)
