"""LookFirst: an answer is not final before the model has seen what it stands on.

A small model writes the computation and `final_answer(...)` in one cell, so it never sees
its result: codes where names were asked, a filter that kept the wrong rows, a share of
the rows a step had already dropped, a given object changed on the way. None of these
fail, and no check of a word or a pattern catches them all. So, once per turn:

- when the cell that calls final_answer is the one that first stored a result the request
  names, and what it stored shows a warning sign (missing values, nothing at all, the same
  value everywhere, a given object changed on the way, other than a given frame that
  only gained columns), the model is shown what it stored
  (type, shape, a few values, how many are missing; the given objects the cell changed)
  and asked to confirm in plain text or to fix it; a confirmation keeps the answer it
  looked at as the turn's answer (a small model's "The answer is correct." had become the
  whole answer), the reply staying the model's prose;
- when an answer states numbers that no cell of this turn printed or stored (a reply in
  prose, or `final_answer("... 29.7")` with the number typed in), the model is asked to
  compute them with code.

The signs are read from the value, never from the request's words. A result with none is
taken: measured on held-out tasks, a look at a clean result was confirmed every time and
cost 2.7-3x the turn's tokens (docs/prompt-tuning.md). `look_always` (in `strict`) looks at
every such result. Each costs one call where it acts, so neither is in `lean`.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any, ClassVar

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.not_done import is_bare_answer
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.turn import Answer, CellRecord, Turn
from cave_tui.printable import printable_line
from cave_tui.runtime.shipped.summary import VarInfo, bounded_repr

LOOK_LIMIT_BYTES = 20_000_000  # larger objects are described from the summary, not read
_VALUES = 5  # values shown of a Series, a list or a frame's rows
_LINE = 160  # characters of one shown value line

_NUMBER = re.compile(r"(?<![\w.])-?\d+(?:,\d{3})*(?:\.\d+)?(?:[eE]-?\d+)?%?")


# -- what a cell stored, described for the model ---------------------------------------------


def describe_value(value: Any) -> str:
    """Type, shape, a few values and the count of missing ones, on one or a few lines."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return bounded_repr(value, _LINE)
    if isinstance(value, pd.Series):
        missing = int(value.isna().sum())
        head = ", ".join(f"{k!s}: {v!r}" for k, v in list(value.items())[:_VALUES])
        more = f", ... ({len(value) - _VALUES} more)" if len(value) > _VALUES else ""
        return (
            f"Series of {len(value)} ({value.dtype}), {missing} missing; "
            f"index {value.index.name or '-'}: {head[:_LINE]}{more}"
        )
    if isinstance(value, pd.DataFrame):
        missing = int(value.isna().sum().sum())
        rows = value.head(3).to_string(max_colwidth=20, max_cols=8).splitlines()
        shown = "\n    ".join(line[:_LINE] for line in rows)
        return (
            f"DataFrame {value.shape[0]}x{value.shape[1]}, {missing} missing cells; "
            f"first rows:\n    {shown}"
        )
    if isinstance(value, float) and math.isnan(value):
        return "nan (a missing value)"
    if isinstance(value, list | tuple | set | dict):
        return f"{type(value).__name__} of {len(value)}: {bounded_repr(value, _LINE)}"
    return f"{type(value).__name__} {bounded_repr(value, _LINE)}"


def warning_signs(value: Any) -> list[str]:
    """What in *value* suggests a wrong result, read from the data alone: missing values,
    nothing at all, one value repeated across several entries."""
    try:
        import pandas as pd
    except ImportError:  # pragma: no cover - pandas is a dependency
        return []
    signs: list[str] = []
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ["it is missing"]
    if isinstance(value, pd.DataFrame | pd.Series):
        if value.size == 0:
            return ["it is empty"]
        missing = int(value.isna().to_numpy().sum())
        if missing:
            signs.append(f"{missing} missing value{'s' if missing != 1 else ''}")
        column = value if isinstance(value, pd.Series) else None
        if isinstance(value, pd.DataFrame) and value.shape[1] == 1:
            column = value.iloc[:, 0]
        if column is not None and column.count() > 1 and column.nunique(dropna=True) == 1:
            signs.append("the same value in every row")
    elif isinstance(value, list | tuple | set | dict | str) and len(value) == 0:
        signs.append("it is empty")
    return signs


def describe_row(row: VarInfo) -> str:
    """What the namespace summary says of *row*, for an object too large to read."""
    shape = row.shape_text()
    dtype = f" ({row.dtype})" if row.dtype else ""
    missing = "; every value missing" if row.all_missing else ""
    return f"{row.type_name} {shape}{dtype}{missing}: {row.preview}"


@dataclass(frozen=True)
class Look:
    """What a name holds now, for the model, and the warning signs it shows."""

    text: str
    signs: tuple[str, ...] = ()


async def look_at(turn: Turn, name: str, rows: dict[str, VarInfo]) -> Look:
    """What *name* holds now: one line (or a few), and its warning signs."""
    row = rows.get(name)
    if row is not None and (row.size_bytes or 0) > LOOK_LIMIT_BYTES:
        return Look(describe_row(row), ("every value missing",) if row.all_missing else ())
    try:
        value = await turn.runtime.retrieve(name)
    except Exception:
        return Look(describe_row(row) if row is not None else "(could not be read)")
    try:
        return Look(describe_value(value), tuple(warning_signs(value)))
    except Exception:
        return Look(describe_row(row) if row is not None else bounded_repr(value, _LINE))


def _printable(text: str) -> str:
    return "\n".join(printable_line(line) for line in text.splitlines())


# -- which cell must be looked at -------------------------------------------------------------


def first_stored(turn: Turn, cell: CellRecord, names: Iterable[str]) -> list[str]:
    """*names* that *cell* stored and that no earlier cell of this turn had stored."""
    earlier = {n for c in turn.cells if c.ok and c is not cell for n in c.result.changed}
    return [n for n in names if n in cell.result.changed and n not in earlier]


def look_note(results: list[tuple[str, str]], changed: list[tuple[str, str]]) -> str:
    lines = ["Before this answer is final, look at what the cell stored (you have not seen it):"]
    lines += [f"- `{name}`: {text}" for name, text in results]
    lines += [f"- `{name}`, given by the user, was changed: now {text}" for name, text in changed]
    lines.append(
        "Check it against the request: the rows it counts, the columns and names it asks "
        "for, no missing values. If it is right, say so in plain text, without code: your "
        "answer stands. If not, fix the code, store the result again and call final_answer."
    )
    return "\n".join(lines)


# -- numbers no cell produced ------------------------------------------------------------------


def numbers_in(text: str) -> list[str]:
    """The numbers written in *text* ("1,204", "29.7", "12%")."""
    return _NUMBER.findall(text)


def _value(token: str) -> float | None:
    try:
        return float(token.rstrip("%").replace(",", ""))
    except ValueError:
        return None


def _decimals(token: str) -> int:
    body = token.rstrip("%").split("e")[0].split("E")[0]
    return len(body.split(".")[1]) if "." in body else 0


def produced(token: str, seen: list[float]) -> bool:
    """*token* is one of *seen*, maybe rounded (to its own decimals) or as a percentage."""
    value = _value(token)
    if value is None:
        return True
    places = _decimals(token)
    tolerance = 0.5 * 10**-places + 1e-9
    return any(abs(v - value) <= tolerance or abs(v * 100 - value) <= tolerance for v in seen)


def unproduced(answer: str, sources: Iterable[str]) -> list[str]:
    """Numbers of *answer* that no text of *sources* holds (the request counts as one)."""
    seen = [v for text in sources for t in numbers_in(text) if (v := _value(t)) is not None]
    return [t for t in dict.fromkeys(numbers_in(answer)) if not produced(t, seen)]


def compute_note(numbers: list[str]) -> str:
    listed = ", ".join(numbers[:4])
    return (
        f"No code of this turn produced {listed}: that answer was not given yet. Write a "
        "```python cell that computes it from the data (print the result or store it), then "
        "call final_answer with the computed value."
    )


class LookFirst(BasePolicy):
    """An answer given in the cell that first stored its result is shown that result and asked
    to confirm or fix it when the result shows a warning sign (missing values, empty, one
    value everywhere, a given object changed); an answer whose numbers no cell produced is
    asked to compute them."""

    name = "look_first"
    always: ClassVar[bool] = False  # look at every first-stored result, signs or not

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        given = turn.given()
        shapes = {r.name: _frame_shape(r) for r in await turn.rows() if r.name in given}
        turn.memo[self.name] = (len(turn.cells), shapes)  # the given frames before this cell
        return None

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        cell = answer.cell
        if cell is None or is_bare_answer(cell.code):
            return await self._numbers(turn, answer)
        return await self._look(turn, cell)

    async def _numbers(self, turn: Turn, answer: Answer) -> Intervention | None:
        sources = [turn.task]
        for c in turn.cells:
            if c.ok:
                sources += [c.code, c.result.output]
        sources += [f"{r.name} {r.preview} {r.shape_text()}" for r in await turn.rows()]
        missing = unproduced(answer.text, sources)
        if not missing:
            return None
        # A reply in prose is dropped from the context: fed back, the model repeats it.
        return self.act(InterventionKind.DOUBT, compute_note(missing), retract=answer.cell is None)

    async def _look(self, turn: Turn, cell: CellRecord) -> Intervention | None:
        results = first_stored(turn, cell, wanted(turn))
        if not results:  # a cell that answers without storing what the request names
            return None
        given = turn.given()
        changed = [n for n in cell.result.changed if n in given and n not in results]
        rows = {r.name: r for r in await turn.rows()}
        looks = {n: await look_at(turn, n, rows) for n in results}
        grew = self._grew(turn, cell, rows)
        if (
            not self.always
            and all(n in grew for n in changed)
            and not any(look.signs for look in looks.values())
        ):
            return None
        shown = [(n, _printable(_with_signs(look))) for n, look in looks.items()]
        kept = [(n, _printable((await look_at(turn, n, rows)).text)) for n in changed]
        return self.act(InterventionKind.DOUBT, look_note(shown, kept), holds=True)

    def _grew(self, turn: Turn, cell: CellRecord, rows: dict[str, VarInfo]) -> set[str]:
        """Given frames that *cell* changed only by adding columns: same rows, every earlier
        column kept (a column the request asked for; nothing the user gave is lost)."""
        memo = turn.memo.get(self.name)
        at = next((i for i, c in enumerate(turn.cells) if c is cell), None)
        if memo is None or memo[0] != at:
            return set()
        grew: set[str] = set()
        for name, before in memo[1].items():
            after = _frame_shape(rows[name]) if name in rows else None
            if before is None or after is None or name not in cell.result.changed:
                continue
            if after[0] == before[0] and set(before[1]) < set(after[1]):
                grew.add(name)
        return grew


def _frame_shape(row: VarInfo) -> tuple[int, tuple[str, ...]] | None:
    """(rows, column names) of a DataFrame row of the summary, else None."""
    if row.type_name != "DataFrame" or not row.shape or row.more_columns:
        return None
    return row.shape[0], tuple(c.name for c in row.columns)


class LookAlways(LookFirst):
    """LookFirst that shows every result first stored by an answering cell, with or without
    a warning sign: one more call on most turns (in `strict`)."""

    name = "look_always"
    always = True


def _with_signs(look: Look) -> str:
    return f"{look.text} (note: {'; '.join(look.signs)})" if look.signs else look.text
