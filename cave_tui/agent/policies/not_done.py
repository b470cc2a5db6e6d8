"""NotDone: right after a failed cell, a cell that only calls final_answer() with fixed text
is not taken as the answer, unless that text speaks of the failure."""

from __future__ import annotations

import ast
import re

from cave_tui.agent.final_answer import FINAL_NAME
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import code_tree
from cave_tui.agent.turn import Turn

NOT_DONE_NOTE = (
    "The last code failed, so the task is not done and that answer was not given. Fix the "
    "error; if the task cannot be done, say why in plain text."
)


def bare_answer(code: str) -> str | None:
    """The fixed text of a cell that only calls final_answer() with constants, else None."""
    tree = code_tree(code)
    if tree is None:
        return None
    calls = [n for n in tree.body if not isinstance(n, ast.Import | ast.ImportFrom | ast.Pass)]
    texts: list[str] = []
    for node in calls:
        if not (
            isinstance(node, ast.Expr)
            and isinstance(node.value, ast.Call)
            and isinstance(node.value.func, ast.Name)
            and node.value.func.id == FINAL_NAME
            and all(isinstance(arg, ast.Constant) for arg in node.value.args)
        ):
            return None
        texts += [str(arg.value) for arg in node.value.args if isinstance(arg, ast.Constant)]
    return " ".join(texts) if calls else None


def is_bare_answer(code: str) -> bool:
    """The cell only calls final_answer() with fixed text: it computes nothing."""
    return bare_answer(code) is not None


_TOKEN = re.compile(r"[\w.\-/]{3,}")


def speaks_of_failure(text: str, error: str) -> bool:
    """*text* names what failed: the error's type, or a quoted value or a word of 5+ letters
    of its last line ('data.csv', 'KeyError'), in any language around it."""
    last = error.strip().splitlines()[-1] if error.strip() else ""
    kind, _, message = last.partition(":")
    lowered = text.lower()
    if kind and kind.strip().lower() in lowered:
        return True
    quoted = re.findall(r"['\"]([^'\"]{2,})['\"]", message)
    if any(q.lower() in lowered for q in quoted):
        return True
    words = {w.lower() for w in _TOKEN.findall(message) if len(w) >= 5 and not w.isdigit()}
    return any(word in lowered for word in words)


def gives_up(turn: Turn, code: str) -> bool:
    """*code* answers with fixed text right after a failure, without speaking of it."""
    failed = turn.last_failure
    if failed is None:
        return False
    text = bare_answer(code)
    return text is not None and not speaks_of_failure(text, failed.result.error_text or "")


class NotDone(BasePolicy):
    """A made-up answer right after a failure ("The heaviest island is Torgersen.") is not
    accepted; an answer that reports the failure is."""

    name = "not_done"

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        if not gives_up(turn, code):
            return None
        return self.act(InterventionKind.REFUSE, NOT_DONE_NOTE)
