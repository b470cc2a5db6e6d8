"""CodesForNames: a result made of a lookup frame's codes where the request asks for
another of its columns ("the full names", "by tzone")."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import NamedTuple

from cave_tui.agent.observation import frame_columns
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.turn import Answer, Turn
from cave_tui.runtime.shipped.summary import Codes, Link, VarInfo


class CodedResult(NamedTuple):
    name: str
    codes: Codes  # whose key's codes, in the result's values or index (runtime/shipped/links.py)
    column: str  # the lookup frame's column the request asks for: "name", "tzone"
    facts: str = ""  # a frame whose `codes.source` column links to that key ("flights")
    type_name: str = ""  # of the result: "str", "list", "Series", ...


def coded_results(
    wanted: Iterable[str], rows: Iterable[VarInfo], request: str, stored: Iterable[str]
) -> list[CodedResult]:
    """Results made of codes where the request asks for another column of their lookup frame.

    A result stored this turn made of a lookup frame's codes (runtime/shipped/links.py), where
    the request names another column of that frame ("the full names", "by tzone"):
    the model kept the codes it had instead of looking up what was asked.
    """
    rows = list(rows)
    frames = frame_columns(rows)
    done = set(stored)
    found = []
    for row in rows:
        codes = row.relations.codes
        if row.name not in wanted or row.name not in done or codes is None:
            continue
        words = _words_about(row.name, request, codes.key)
        asked = [
            column
            for column in frames.get(codes.frame, {})
            if column != codes.key and (column.lower() in words or f"{column.lower()}s" in words)
        ]
        if asked:
            found.append(
                CodedResult(row.name, codes, asked[0], _linked_frame(rows, codes), row.type_name)
            )
    return found


_CLAUSES = re.compile(r"(?<=[.;?!])\s+|\s+(?:and|then)\s+|,\s+")
_WORDS = re.compile(r"[a-z_]+")


def _words_about(name: str, request: str, key: str) -> set[str]:
    """The words of the clauses that name `name`; the whole request's when they name no
    column, unless they call the result a code ("Store its code in `top`")."""
    near = {
        word
        for clause in _CLAUSES.split(request)
        if f"`{name}`" in clause
        for word in _WORDS.findall(clause.lower())
    }
    if near & {"code", "codes", key.lower()}:
        return near
    return near | set(_WORDS.findall(request.lower()))


def _linked_frame(rows: list[VarInfo], codes: Codes) -> str:
    """The first frame whose `codes.source` column links to their key (flights: dest)."""
    link = Link(codes.source, codes.frame, codes.key)
    return next((r.name for r in rows if codes.source and link in r.relations.links), "")


def codes_note(item: CodedResult) -> str:
    frame, key, where = item.codes.frame, item.codes.key, item.codes.where
    lookup = f"{frame}.set_index('{key}')['{item.column}']"
    if where == "index" and "name" in item.column.lower():  # one name per code
        fix = f"Relabel it: {item.name} = {item.name}.rename(index={lookup})"
    elif where == "index" and item.facts:
        fix = (
            f"Merge first: merged = {item.facts}.merge({frame}, "
            f"left_on='{item.codes.source}', right_on='{key}'), "
            f"then group merged by '{item.column}'"
        )
    elif where == "index":
        fix = f"Merge the frames on the linked columns first, then group by '{item.column}'"
    elif item.type_name == "str":  # the exact line: a model re-stores under its own name
        fix = f"Look it up: {item.name} = {lookup}[{item.name}]"
    elif item.type_name in ("list", "tuple"):
        fix = f"Look them up: {item.name} = [{lookup}[c] for c in {item.name}]"
    elif item.type_name == "Series":
        fix = f"Look them up: {item.name} = {item.name}.map({lookup})"
    else:
        fix = (
            f"Look it up: lookup = {lookup}, then lookup[code] for one code, "
            "[lookup[c] for c in codes] or .map(lookup) for many"
        )
    holds = "is indexed by" if where == "index" else "holds"
    return (
        f"`{item.name}` {holds} {item.codes.key_text()} codes, but the request asks for "
        f"{item.column}, a column of {frame}. {fix}. Store that in `{item.name}`, then call "
        "final_answer."
    )


class CodesForNames(BasePolicy):
    """Codes given where the request asks for names (or another column) are questioned."""

    name = "codes_for_names"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        found = coded_results(wanted(turn), await turn.rows(), turn.task, turn.stored)
        notes = [codes_note(c) for c in found]
        return self.joined(InterventionKind.DOUBT, notes)
