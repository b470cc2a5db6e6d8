"""MissingValues: the request leaves out missing values and no cell dropped them."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import code_tree, wanted
from cave_tui.agent.turn import Answer, Turn

_LEAVES_OUT = re.compile(
    r"\b(?:leave out|leaving out|skip|skipping|drop|dropping|exclude|excluding|ignore|ignoring"
    r"|without)\b[^.;]*\bmissing\b|\bmissing\b[^.;]*\b(?:left out|skipped|dropped|excluded)\b",
    re.IGNORECASE,
)

_HANDLES_MISSING = re.compile(r"\b(?:dropna|notna|notnull|isna|isnull|skipna|fillna|count)\b")

MISSING_VALUES_NOTE = (
    "The request leaves out rows with missing values, and no code of this turn dropped them: "
    "a comparison is False for NaN and len() or .size() counts NaN rows. If the result counts "
    "or compares such rows, drop them first (df = df.dropna(subset=['x'])) and store the "
    "result again; if not, call final_answer again."
)


def keeps_missing(cells: Iterable[str], request: str) -> bool:
    """The request leaves out missing values ("skip flights whose arr_delay is missing"), no
    cell that ran this turn handles them (dropna, notna, isna, skipna, fillna), and one
    compares or counts rows, where NaN rows change the result (`.mean()` skips them)."""
    cells = list(cells)
    if not cells or not _LEAVES_OUT.search(request):
        return False
    if any(_HANDLES_MISSING.search(code) for code in cells):
        return False
    return any(_compares_or_counts(code) for code in cells)


_COUNTING = frozenset({"len", "size", "value_counts", "shape", "sum"})


def _compares_or_counts(code: str) -> bool:
    tree = code_tree(code)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.Compare):
            return True
        if isinstance(node, ast.Attribute) and node.attr in _COUNTING:
            return True
        if isinstance(node, ast.Name) and node.id == "len":
            return True
    return False


class MissingValues(BasePolicy):
    """Asks whether rows with missing values the request leaves out were counted (word trigger)."""

    name = "missing_values"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        if not wanted(turn) or not keeps_missing(turn.ran, turn.task):
            return None
        return self.act(InterventionKind.DOUBT, MISSING_VALUES_NOTE)
