"""MissingResult: the request asks to store its result in `name`, and no cell that ran
without error this turn stored it there."""

from __future__ import annotations

from collections.abc import Iterable

from cave_tui.agent.observation import frame_columns
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.not_done import speaks_of_failure
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.policies.resend import may_pass
from cave_tui.agent.turn import Answer, Turn
from cave_tui.runtime.shipped.summary import VarInfo


def missing_names(
    wanted: Iterable[str],
    rows: Iterable[VarInfo],
    before: Iterable[str] = (),
    stored: Iterable[str] | None = None,
) -> list[str]:
    """Which *wanted* result names this turn has not stored.

    *before* are the names defined when the turn began: those are the turn's
    inputs (`Using `adelie`, ...`). A frame's column (`dep_time`) is never a
    result's name. With *stored* (what cells that ran without error assigned this
    turn), a name that exists but was only set by a failed cell (the code, where
    the request asked for the full name) is missing too.
    """
    rows = list(rows)
    defined = {row.name for row in rows}
    columns = {column for frame in frame_columns(rows).values() for column in frame}
    inputs = set(before)
    done = set(stored) if stored is not None else defined
    return [
        name
        for name in wanted
        if name not in inputs and name not in columns and (name not in defined or name not in done)
    ]


def stored_as(name: str, stored: Iterable[str], before: Iterable[str] = ()) -> str | None:
    """The one new name this turn stored that looks like *name* (`farthest_airport_name`
    for `farthest_airport`): where the model most likely put the missing result."""
    old = set(before)
    close = [n for n in stored if n != name and n not in old and (name in n or n in name)]
    return close[0] if len(close) == 1 else None


def missing_note(names: list[str], aliases: dict[str, str] | None = None) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    moves = [f"{name} = {aliases[name]}" for name in names if aliases and aliases.get(name)]
    store = f" (`{'; '.join(moves)}`)" if moves else ""
    return (
        f"The request asks to store its result in {listed}, and no code that ran without error "
        f"in this turn stored it there: that answer was not given yet. Store the result under "
        f"that exact name{store}, then call final_answer."
    )


def reports_failure(turn: Turn, text: str) -> bool:
    """*text* speaks of an error of this turn that a rerun does not fix ("There is no price
    column"), or of one that has passing causes and failed twice: an honest report that the
    result cannot be made, not an answer given before it. One timeout is worth a retry."""
    failed = [cell for cell in turn.cells if cell.failed]
    for cell in failed:
        if speaks_of_failure(text, cell.result.error_text or ""):
            same = [c for c in failed if c.result.error_type == cell.result.error_type]
            if not may_pass(cell.result) or len(same) >= 2:
                return True
    return False


class MissingResult(BasePolicy):
    """An answer given before the result the request names is stored is questioned once."""

    name = "missing_result"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        rows = await turn.rows()
        stored, before = turn.stored, turn.before or frozenset()
        missing = missing_names(wanted(turn), rows, before, stored)
        if not missing or reports_failure(turn, answer.text):
            return None
        aliases = {name: stored_as(name, stored, before) for name in missing}
        note = missing_note(missing, {k: v for k, v in aliases.items() if v})
        return self.act(InterventionKind.DOUBT, note)
