"""What the answer checks read from a request and a cell: its syntax tree, its result names."""

from __future__ import annotations

import ast
import keyword
import re
from collections.abc import Iterable

from cave_tui.agent.syntax import code_tree as code_tree  # the answer checks import it here
from cave_tui.agent.turn import Turn

_BACKTICKED = re.compile(r"`([A-Za-z_]\w*)`")
_STORE_WORDS = re.compile(
    r"\b(?:store|save|assign|keep|put|make|create|build|add|name|call)\w*\b", re.IGNORECASE
)


def result_names(request: str) -> list[str]:
    """Names the request asks to store results in: `name` in backticks, when it asks to store."""
    if not _STORE_WORDS.search(request):
        return []
    names = dict.fromkeys(_BACKTICKED.findall(request))
    return [name for name in names if not keyword.iskeyword(name)]


def used_as_tool(name: str, cells: Iterable[str]) -> bool:
    """*name* is an attribute, a called function or an import in *cells*: a method the
    request names (`groupby`), not a result to store."""
    for code in cells:
        tree = code_tree(code)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Attribute) and node.attr == name:
                return True
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
                called = node.func.id == name
            elif isinstance(node, ast.Import | ast.ImportFrom):
                called = any((a.asname or a.name).split(".")[0] == name for a in node.names)
            else:
                called = False
            if called:
                return True
    return False


def named_as_part(name: str, cells: Iterable[str]) -> bool:
    """*name* is a part of something in *cells*: a dict key, a keyword or parameter name, a
    label in brackets (`{'count': n}`, `agg(total=...)`, `def f(threshold)`, `df['count']`)."""
    for code in cells:
        tree = code_tree(code)
        if tree is None:
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.arg | ast.keyword) and node.arg == name:
                return True
            if isinstance(node, ast.Dict) and any(
                isinstance(key, ast.Constant) and key.value == name for key in node.keys
            ):
                return True
            if (
                isinstance(node, ast.Subscript)
                and isinstance(node.slice, ast.Constant)
                and node.slice.value == name
            ):
                return True
    return False


def wanted(turn: Turn) -> list[str]:
    """The result names of the turn's request that its cells do not use as tools; once one of
    them is stored, those the cells only use as a part of it (a key, a parameter) drop out."""
    names = turn.memo.get("wanted")
    if names is None:
        names = turn.memo["wanted"] = result_names(turn.task)
    cells = [cell.code for cell in turn.cells]
    names = [name for name in names if not used_as_tool(name, cells)]
    stored = turn.stored
    if any(name in stored for name in names):
        names = [name for name in names if name in stored or not named_as_part(name, cells)]
    return names
