"""TextForNumbers: a Series of text stored where the request asks for counts or means."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.turn import Answer, Turn
from cave_tui.runtime.shipped.summary import VarInfo

_NUMBER_WORDS = re.compile(
    r"\b(?:count|counts|how many|number of|percentage|percent|share|mean|average|total|sum)\b",
    re.IGNORECASE,
)

_NUMBER_NOUNS = {
    "count": ("count", "counts", "how many", "number of"),
    "percentage": ("percentage", "percent", "share"),
    "mean": ("mean", "average"),
    "total": ("total", "sum"),
}

_TEXT_DTYPES = ("object", "str", "string", "category")


def text_for_numbers(
    wanted: Iterable[str], rows: Iterable[VarInfo], request: str, stored: Iterable[str]
) -> list[tuple[str, str]]:
    """(result, what the request asks for) for a Series of text where numbers were asked.

    "Count the flights of each airline" answered with the most frequent value per
    group (a copied pattern) gives text, and nothing fails.
    """
    asked = _NUMBER_WORDS.search(request)
    if asked is None:
        return []
    done = set(stored)
    word = asked.group(0).lower()
    noun = next((n for n, ws in _NUMBER_NOUNS.items() if word in ws), word)
    return [
        (row.name, noun)
        for row in rows
        if row.name in wanted
        and row.name in done
        and row.type_name == "Series"
        and row.dtype in _TEXT_DTYPES
    ]


def text_note(item: tuple[str, str]) -> str:
    name, asked = item
    return (
        f"`{name}` holds text values, but the request asks for a {asked}: compute numbers "
        "(rows per group: df.groupby('a').size()). Store them in "
        f"`{name}`, then call final_answer."
    )


class TextForNumbers(BasePolicy):
    """Text stored where the request's words ask for numbers is questioned (a word trigger)."""

    name = "text_for_numbers"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        found = text_for_numbers(wanted(turn), await turn.rows(), turn.task, turn.stored)
        notes = [text_note(t) for t in found]
        return self.joined(InterventionKind.DOUBT, notes)
