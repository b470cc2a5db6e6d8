"""EarlyReduce: `(a) & (b).sum()` reduces one mask before the masks are combined."""

from __future__ import annotations

import ast

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import code_tree
from cave_tui.agent.turn import Answer, Turn

_REDUCERS = frozenset({"sum", "mean", "count", "any", "all"})

EARLY_REDUCE_NOTE = (
    "In `(a) & (b).sum()`, .sum() applies to (b) alone, before the `&`, so the result "
    "mixes a mask with a number. Combine the whole condition first, then reduce: "
    "((a) & (b)).sum(); store that, then call final_answer."
)


def reduced_before_combined(code: str) -> bool:
    """`(a) & (b).sum()`: a comparison reduced before it is combined with another mask."""
    tree = code_tree(code)
    if tree is None:
        return False
    for node in ast.walk(tree):
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.BitAnd | ast.BitOr):
            for side in (node.left, node.right):
                if (
                    isinstance(side, ast.Call)
                    and isinstance(side.func, ast.Attribute)
                    and side.func.attr in _REDUCERS
                    and isinstance(side.func.value, ast.Compare)
                ):
                    return True
    return False


class EarlyReduce(BasePolicy):
    """An answer computed by `(a) & (b).sum()` is questioned."""

    name = "early_reduce"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        ran = turn.ran
        if not ran or not reduced_before_combined(ran[-1]):
            return None
        return self.act(InterventionKind.DOUBT, EARLY_REDUCE_NOTE)
