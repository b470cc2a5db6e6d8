"""KeepGiven: a cell that rebinds an object the user gave runs, and the user's original stays.

A small model "fixes" its error by rebinding what the user gave it (`flights =
flights.merge(...)`, a new `def delay_category`); a capable model rebinds one because
the request asks it to ("Reverse the secret"), in any language. Which is which cannot
be read from the request, so the cell always runs. The runtime keeps every injected
item as the user gave it (`runtime.injected`), so the original stays reachable
(`/restore NAME`); the model and the user are told the name now holds the cell's value.
Changes in place are not rebinding, and an empty injected variable is a slot to fill.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import code_tree
from cave_tui.agent.turn import CellRecord, Turn


def module_bindings(code: str) -> list[str]:
    """Names *code* binds at module level: assignments, def/class, imports, del, for and
    with targets, also inside if/for/while/with/try bodies (not in function bodies)."""
    tree = code_tree(code)
    return list(dict.fromkeys(_bindings(tree.body))) if tree is not None else []


def _bindings(body: list[ast.stmt]) -> Iterable[str]:
    for node in body:
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            yield node.name
            continue
        targets: list[ast.expr] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Import | ast.ImportFrom):
            yield from ((a.asname or a.name).split(".")[0] for a in node.names)
        elif isinstance(node, ast.For | ast.AsyncFor):
            targets = [node.target]
        elif isinstance(node, ast.With | ast.AsyncWith):
            targets = [item.optional_vars for item in node.items if item.optional_vars]
        for target in targets:
            yield from _names_of(target)
        for field in ("body", "orelse", "finalbody", "handlers"):  # if/for/while/with/try
            inner = getattr(node, field, None)
            if isinstance(inner, list):
                nested = [n for n in inner if isinstance(n, ast.stmt)]
                nested += [s for h in inner if isinstance(h, ast.ExceptHandler) for s in h.body]
                yield from _bindings(nested)


def _names_of(target: ast.expr) -> Iterable[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _names_of(element)
    elif isinstance(target, ast.Starred):
        yield from _names_of(target.value)


def kept_note(names: list[str]) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    verb = "holds" if len(names) == 1 else "hold"
    return (
        f"{listed} now {verb} this cell's value; the original the user gave is kept apart "
        "(the user can restore it)."
    )


class KeepGiven(BasePolicy):
    """Tells the model and the user when a cell rebinds an object the user gave; the
    original stays in `runtime.injected` for `/restore`."""

    name = "keep_given"

    async def before_cell(self, turn: Turn, code: str) -> Intervention | None:
        given = turn.given()
        bound = [name for name in module_bindings(code) if name in given]
        if bound:  # what they hold before the cell: an empty variable is a slot to fill
            rows = {row.name: row for row in await turn.rows()}
            bound = [n for n in bound if n in rows and not rows[n].is_empty]
        turn.memo[self.name] = bound
        return None

    async def after_cell(self, turn: Turn, cell: CellRecord) -> Intervention | None:
        bound = turn.memo.pop(self.name, [])
        rebound = [n for n in bound if n in cell.result.changed or n in cell.result.deleted]
        if not cell.ran or not rebound:
            return None
        return self.act(InterventionKind.KEEP, kept_note(rebound))
