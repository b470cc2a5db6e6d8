"""WrongType: "Store the int in `n`" answered with a bool, a Series or a frame."""

from __future__ import annotations

import re
from collections.abc import Iterable

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.turn import Answer, Turn
from cave_tui.runtime.shipped.summary import VarInfo

# "number of engines" is no type, nor "the frame `flights`": only words that name one.
_TYPE_WORDS = re.compile(
    r"\b(int|integer|float|number(?! of)|string|list|tuple|dict|dictionary|Series|DataFrame)\b"
)

_TYPE_OF_WORD = {"integer": "int", "string": "str", "dictionary": "dict"}

_ARTICLE = {"int": "an int", "float": "a float", "number": "a number", "str": "a string"}


def _type_fits(asked: str, type_name: str) -> bool:
    integer = type_name.startswith(("int", "uint")) or type_name == "integer"
    real = integer or type_name.startswith("float")
    return {
        "int": integer,
        "float": real,
        "number": real,
        "str": type_name in ("str", "str_"),
        "list": type_name in ("list", "tuple", "ndarray", "Index") or type_name.endswith("Array"),
    }.get(asked, type_name == asked)


def _asked_types(request: str, names: Iterable[str]) -> dict[str, str]:
    """name → the one type the request's sentence about it names ("Store the int in `n`")."""
    out: dict[str, str] = {}
    for sentence in re.split(r"(?<=[.;?!])\s+", request):
        words = {_TYPE_OF_WORD.get(w, w) for w in _TYPE_WORDS.findall(sentence)}
        if len(words) != 1:
            continue
        (asked,) = words
        named = [name for name in names if f"`{name}`" in sentence]
        if len(named) == 1:  # with two results, which one the type is for is a guess
            out.setdefault(named[0], asked)
    return out


def wrong_types(
    wanted: Iterable[str],
    rows: Iterable[VarInfo],
    request: str,
    stored: Iterable[str],
    before: Iterable[str] = (),
) -> list[tuple[str, str, str, str]]:
    """(result, its type, the type the request asks for, its preview) where they differ.

    "Store the int in `n`" answered with `... > 1000` stores a bool, and nothing fails.
    Only results stored this turn that were not there before it (inputs keep their type).
    """
    old, done = set(before), set(stored)
    names = [n for n in wanted if n in done and n not in old]
    asked = _asked_types(request, names)
    return [
        (row.name, row.type_name, asked[row.name], row.preview)
        for row in rows
        if row.name in asked
        and row.kind == "variable"
        and not _type_fits(asked[row.name], row.type_name)
    ]


def type_note(item: tuple[str, str, str, str]) -> str:
    name, got, asked, preview = item
    shown = f" ({preview[:40]})" if preview and got not in ("DataFrame", "Series") else ""
    want = _ARTICLE.get(asked, f"a {asked}")
    fix = ""
    if got in ("bool", "bool_") and asked in ("int", "number", "float"):
        fix = " To count where a condition holds: int((condition).sum())."
    elif got in ("Series", "DataFrame") and asked in ("int", "float", "number", "str"):
        fix = " Reduce it to one value (.sum(), .max(), len(...), .idxmax()) first."
    elif got == "DataFrame" and asked == "Series":
        fix = " Select its one column, or aggregate (.size(), .sum()) to get a Series."
    return (
        f"`{name}` is a {got}{shown}, but the request asks for {want}.{fix} Store {want} in "
        f"`{name}`, then call final_answer."
    )


class WrongType(BasePolicy):
    """A result of another type than the one the request names is questioned."""

    name = "wrong_type"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        found = wrong_types(
            wanted(turn), await turn.rows(), turn.task, turn.stored, turn.before or ()
        )
        notes = [type_note(t) for t in found]
        return self.joined(InterventionKind.DOUBT, notes)
