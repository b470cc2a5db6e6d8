"""FractionForPercent: a percentage answered as the fraction it was computed from.

"What percentage of the flights left late?": a small model answers the mean of a yes/no
column, a share or a `pct_change()`, 0.3838, where 38.38 was asked. The answer is questioned
once when the request asks for a percentage, a value the answer gives for it lies strictly
between -1 and 1 (not 0), and no cell of the turn scaled by 100 (a `100` in the code, a
`%` format spec). A value written with its `%` is a percentage already and is left alone.
Which value: the fields of the request's answer form whose name says percent (`pct`,
`percent...`), else its one field; without a form, an answer that is one number.
"""

from __future__ import annotations

import re

from cave_tui.agent.policies.answer_format import asked_fields, field_values
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, Turn

PERCENT_ASKED = re.compile(r"\bper\s?cent(?:age)?s?\b|%", re.IGNORECASE)
PERCENT_FIELD = re.compile(r"perc|pct", re.IGNORECASE)
# Code that scales by 100: the number 100 (`* 100`, `100 *`, `/ 100`), or a `%` format spec.
SCALED = re.compile(r"(?<![\w.])100(?:\.0*)?(?![\w.])|1e2\b|:[^{}'\"\n]*%")
NUMBER = re.compile(r"-?(?:\d+\.?\d*|\.\d+)(?:[eE]-?\d+)?")


def fractions(answer: str, fields: list[str]) -> list[tuple[str, str]]:
    """(label, value) of the answer's values for a percentage that read as fractions: a
    field's `@name[value]`, or the whole answer when it is one number (label "")."""
    if fields:
        named = [f for f in fields if PERCENT_FIELD.search(f)] or (
            fields if len(fields) == 1 else []
        )
        pairs = [(f, value) for f in named for value in field_values(answer, f)]
    else:
        pairs = [("", answer.strip())]
    return [(label, value) for label, value in pairs if _is_fraction(value)]


def _is_fraction(value: str) -> bool:
    if not NUMBER.fullmatch(value):
        return False
    number = float(value)
    return number != 0 and -1 < number < 1


def fraction_note(found: list[tuple[str, str]]) -> str:
    shown = ", ".join(f"@{label}[{value}]" if label else value for label, value in found)
    return (
        f"The request asks for a percentage, and {shown} lies between -1 and 1 with no cell "
        "scaling by 100. If it is a fraction (a mean of yes/no values, a share, a "
        "pct_change), the percentage is 100 times it: compute that, round it as asked and "
        "give the final answer again; if it is a percentage already, give it again as it is."
    )


class FractionForPercent(BasePolicy):
    """An answer giving a fraction (-1 < v < 1) where the request asks for a percentage, no
    cell of the turn having scaled by 100, is questioned once."""

    name = "fraction_for_percent"
    asks_after_a_doubt = True  # the answer another doubt asked for may be the fraction

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        if turn.memo.get(self.name) or not PERCENT_ASKED.search(turn.task):
            return None
        if any(SCALED.search(cell.code) for cell in turn.cells):
            return None
        found = fractions(answer.text, asked_fields(turn.task))
        if not found:
            return None
        turn.memo[self.name] = True
        return self.act(InterventionKind.DOUBT, fraction_note(found))
