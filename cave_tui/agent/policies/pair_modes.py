"""PairModes: a request about a pair answered with each column's own most frequent value."""

from __future__ import annotations

import ast
import re

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import code_tree
from cave_tui.agent.turn import Answer, Turn

_PAIR_WORDS = re.compile(r"\b(?:pairs?|combinations?|together)\b", re.IGNORECASE)

_MODE_CALLS = frozenset({"idxmax", "mode", "argmax"})


def separate_modes(code: str, request: str) -> tuple[str, list[str]] | None:
    """(frame, columns) when a request about a pair gets each column's own most frequent
    value, put together: `(f['origin'].value_counts().idxmax(), f['dest'].value_counts()
    .idxmax())` is not the most frequent (origin, dest) pair."""
    if not _PAIR_WORDS.search(request):
        return None
    tree = code_tree(code)
    if tree is None:
        return None
    for node in ast.walk(tree):
        if not isinstance(node, ast.Tuple | ast.List) or len(node.elts) < 2:
            continue
        found = [m for m in map(_mode_of_column, node.elts) if m is not None]
        frames = {frame for frame, _ in found}
        columns = [column for _, column in found]
        if len(found) == len(node.elts) and len(frames) == 1 and len(set(columns)) > 1:
            return frames.pop(), columns
    return None


def _mode_of_column(node: ast.AST) -> tuple[str, str] | None:
    """('flights', 'origin') for `flights['origin'].value_counts().idxmax()` or `.mode()[0]`."""
    if not any(
        isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _MODE_CALLS
        for n in ast.walk(node)
    ):
        return None
    for n in ast.walk(node):
        if (
            isinstance(n, ast.Subscript)
            and isinstance(n.value, ast.Name)
            and isinstance(n.slice, ast.Constant)
            and isinstance(n.slice.value, str)
        ):
            return n.value.id, n.slice.value
    return None


def pair_note(frame: str, columns: list[str]) -> str:
    listed = ", ".join(repr(c) for c in columns)
    return (
        f"Each column's most frequent value, taken apart, is not the most frequent combination "
        f"({listed}). Count the combinations ({frame}.groupby([{listed}]).size().idxmax()), "
        "store that, then call final_answer."
    )


class PairModes(BasePolicy):
    """Separate modes given for the most frequent pair are questioned."""

    name = "pair_modes"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        ran = turn.ran
        pair = separate_modes(ran[-1], turn.task) if ran else None
        return self.act(InterventionKind.DOUBT, pair_note(*pair)) if pair else None
