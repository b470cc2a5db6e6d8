"""MissingAnswer: an answer that gives a missing value (`nan`, `None`, `inf`) for what the
request asks.

"What was the mean temperature at 13:00 in August?": a small model selects the wrong
column or filters on a value no row has, the mean of nothing is NaN, and `@mean_temp[nan]`
is answered; nothing failed. A value of the request's answer form (`@name[value]`) that is
missing, or an answer that is only such a value, is questioned once. Prose that mentions
NaN ("no NaN values are left") is left alone.
"""

from __future__ import annotations

import re

from cave_tui.agent.policies.answer_format import asked_fields, field_values
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Answer, Turn

# What Python, NumPy and pandas print for a missing or unbounded number.
MISSING = re.compile(r"[-+]?(?:nan|none|inf|infinity|<na>|nat|null)", re.IGNORECASE)


def missing_values(answer: str, fields: list[str]) -> list[str]:
    """The answer's missing values, as shown: `@name[nan]` for a field of the form, or the
    whole answer when it is one such value."""
    text = answer.strip().strip("`").strip()
    if MISSING.fullmatch(text):
        return [text]
    return [
        f"@{field}[{value}]"
        for field in fields
        for value in field_values(answer, field)
        if MISSING.fullmatch(value)
    ]


def missing_note(found: list[str]) -> str:
    return (
        f"The answer gives {', '.join(found)}: a missing value, not an answer. It most often "
        "comes from a mean, a max or a lookup over no rows (a filter or a selection that kept "
        "nothing, the wrong column) or over missing values. Print how many rows and values "
        "it was computed from, fix what selected them, and give the final answer again."
    )


class MissingAnswer(BasePolicy):
    """An answer whose value for the request is missing (nan, None, inf) is questioned once."""

    name = "missing_answer"
    asks_after_a_doubt = True  # the answer another doubt asked for may be the NaN

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        if turn.memo.get(self.name):
            return None
        found = missing_values(answer.text, asked_fields(turn.task))
        if not found:
            return None
        turn.memo[self.name] = True
        return self.act(InterventionKind.DOUBT, missing_note(found))
