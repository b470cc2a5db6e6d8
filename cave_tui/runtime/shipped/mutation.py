"""Which names a cell may have changed in place, read from its code alone.

Standard library only: the kernel runs this file as `_cave_mutation` (kernel/install.py),
and the in-process runtime imports it.
"""

from __future__ import annotations

import ast

# Methods that change their object. pandas' `dropna`, `fillna`, `rename`, `set_index`… return
# a new object unless `inplace=True` (checked apart): listing them said `[changed: penguins]`
# after `sexed = penguins.dropna(...)`, and the model was told of a change that never was.
_MUTATORS = frozenset(
    {
        "append", "extend", "insert", "pop", "remove", "clear", "update", "sort", "reverse",
        "add", "discard", "setdefault", "popitem", "__setitem__",
    }
)  # fmt: skip


def mutation_targets(code: str, before_line: int | None = None) -> set[str]:
    """Names a cell may mutate in place: `x[...] = `, `x.a = `, `x.append(...)`, `inplace=True`.

    With *before_line*, only statements above that line count (a failed cell never ran the
    rest: saying it changed a frame there would send the model after a change that never was).
    """
    try:
        tree = compile(
            code, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
        )
    except SyntaxError:
        return set()
    names: set[str] = set()

    def root(node: ast.AST) -> str | None:
        while isinstance(node, ast.Attribute | ast.Subscript):
            node = node.value
        return node.id if isinstance(node, ast.Name) else None

    for node in ast.walk(tree):
        if before_line is not None and getattr(node, "lineno", 0) >= before_line:
            continue
        targets: list[ast.AST] = []
        if isinstance(node, ast.Assign):
            targets = list(node.targets)
        elif isinstance(node, ast.AugAssign | ast.AnnAssign):
            targets = [node.target]
        elif isinstance(node, ast.Delete):
            targets = list(node.targets)
        elif isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute):
            inplace = any(
                k.arg == "inplace" and isinstance(k.value, ast.Constant) and k.value.value is True
                for k in node.keywords
            )
            if node.func.attr in _MUTATORS or inplace:
                name = root(node.func.value)
                if name:
                    names.add(name)
        for target in targets:
            if isinstance(target, ast.Attribute | ast.Subscript):
                name = root(target)
                if name:
                    names.add(name)
    return names
