"""Strings a cell spells unlike the request or the data: a filter on them matches nothing."""

from __future__ import annotations

import ast
import difflib
import re
from collections.abc import Iterable, Mapping

from cave_tui.agent.policies.request import code_tree

_WORD = re.compile(r"[A-Za-z][\w.&'-]*[A-Za-z0-9]")


# Calls whose strings are text for the user, never a value matched against data.
_SAID = frozenset({"final_answer", "print", "display"})


def _strings(code: str) -> list[str]:
    """The string literals of *code*, leaving out what it says to the user: the arguments of
    final_answer, print and display, and f-strings."""
    tree = code_tree(code)
    if tree is None:
        return []
    found: list[str] = []
    pending: list[ast.AST] = [tree]
    while pending:
        node = pending.pop()
        said = isinstance(node, ast.Call) and getattr(node.func, "id", None) in _SAID
        if said or isinstance(node, ast.JoinedStr):
            continue
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            found.append(node.value.strip())
        pending.extend(reversed(list(ast.iter_child_nodes(node))))
    return found


def misspelt_values(code: str, request: str, known: Iterable[str] = ()) -> list[tuple[str, str]]:
    """(the code's string, the request's word) for strings the code spells unlike the request.

    Small models misspell rare words they copy (a request's `EMBRAER` became
    `EMBRERAER`): a filter on the misspelt value matches nothing, and nothing fails.
    *known* names (the frames' columns) are never taken for misspellings, nor plurals.
    """
    words = {w.lower(): w for w in _WORD.findall(request) if len(w) >= 4}
    lowered_request = request.lower()
    known_lower = {k.lower() for k in known}
    found: list[tuple[str, str]] = []
    for value in _strings(code):
        lowered = value.lower()
        if len(value) < 4 or " " in value or lowered in lowered_request or lowered in known_lower:
            continue
        if any(word in lowered for word in words):  # derived from a word: 'flights.csv'
            continue
        close = difflib.get_close_matches(lowered, list(words), n=1, cutoff=0.75)
        plural = close and close[0].rstrip("es") == lowered.rstrip("es")
        if close and not plural and (value, words[close[0]]) not in found:
            found.append((value, words[close[0]]))
    return found


def misspelt_note(pair: tuple[str, str]) -> str:
    value, word = pair
    return f"The code uses {value!r}; the request spells it {word!r}."


def unknown_levels(
    code: str, levels: Mapping[str, Mapping[str, list[str]]]
) -> list[tuple[str, str, str]]:
    """(the code's string, frame.column, the value it is close to) for strings that are no
    value of a categorical column but nearly one ('embraer' where the data has 'EMBRAER')."""
    found: list[tuple[str, str, str]] = []
    every = {v for columns in levels.values() for values in columns.values() for v in values}
    for value in _strings(code):
        if not value or value in every:
            continue
        for frame, columns in levels.items():
            for column, values in columns.items():
                by_lower = {v.lower(): v for v in values}
                close = by_lower.get(value.lower())
                if close is None:
                    matches = difflib.get_close_matches(value, values, n=1, cutoff=0.8)
                    close = matches[0] if matches else None
                if close is not None and (value, f"{frame}.{column}", close) not in found:
                    found.append((value, f"{frame}.{column}", close))
    return found


def level_note(item: tuple[str, str, str]) -> str:
    value, column, close = item
    return f"{value!r} is no value of `{column}`; it has {close!r}."
