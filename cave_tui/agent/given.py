"""Keeping the user's injected objects: a cell that replaces one is not run.

A small model "fixes" its own error by rebinding what the user gave it:
`flights = flights.merge(airlines, ...)`, `flights = pd.read_csv('flights.csv')`, or a
new `def delay_category(...)` over the injected function (docs/prompt-tuning.md, change
30). Each answer after that is computed on the wrong data, and `/retrieve flights`
returns the replacement. A cell that rebinds an injected name at module level is
therefore not run unless the request asks to change that object; the model is told to
use the objects as they are and to put derived data in new names. Changing an object in
place (`weather['temp_c'] = ...`) is not rebinding and is never stopped here, and an
injected variable that is empty (`Variable("cleaned_data", [], "Output: ...")`, upstream's
way to ask a sub-agent for a result) is a slot to fill, not data to keep.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable

from cave_tui.runtime.summary import VarInfo

_CHANGE_WORDS = re.compile(
    r"\b(?:replace|overwrite|reassign|redefine|update|modify|change|add|drop|remove|rename|"
    r"filter|set|clean|fix|convert|sort|keep only|reload|reset)\w*\b",
    re.IGNORECASE,
)


def rebound_given(code: str, given: Iterable[str], request: str) -> list[str]:
    """The injected names *code* rebinds at module level that *request* does not ask to change.

    Assignments, `def`/`class`, imports and `del` of a given name count; names bound
    inside a function or class body are that body's own and do not.
    """
    given = set(given)
    if not given:
        return []
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return []
    bound: list[str] = []
    for name in _module_bindings(tree.body):
        if name in given and name not in bound and not _asked_to_change(name, request):
            bound.append(name)
    return bound


def kept_given(names: list[str], rows: Iterable[VarInfo]) -> list[str]:
    """Of *names*, those that hold something to keep: functions, classes, and variables
    that are not empty (an empty one, or one gone from the summary, is free to fill)."""
    by_name = {row.name: row for row in rows}
    return [name for name in names if name in by_name and not by_name[name].is_empty]


def _module_bindings(body: list[ast.stmt]) -> Iterable[str]:
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
                yield from _module_bindings(nested)


def _names_of(target: ast.expr) -> Iterable[str]:
    if isinstance(target, ast.Name):
        yield target.id
    elif isinstance(target, ast.Tuple | ast.List):
        for element in target.elts:
            yield from _names_of(element)
    elif isinstance(target, ast.Starred):
        yield from _names_of(target.value)


def _asked_to_change(name: str, request: str) -> bool:
    """The request names the object and asks for a change of some kind."""
    named = re.search(rf"(?<![\w.]){re.escape(name)}(?!\w)", request)
    return bool(named) and bool(_CHANGE_WORDS.search(request))


def given_note(names: list[str]) -> str:
    listed = ", ".join(f"`{name}`" for name in names)
    verb = "holds" if len(names) == 1 else "hold"
    return (
        f"Not run: this cell replaces {listed}, which {verb} what the user gave you, and the "
        "request does not ask to change it. Use the given objects as they are: put derived "
        "data in new names (e.g. `subset = df.dropna(...)`), and call the given functions "
        "instead of defining them again."
    )
