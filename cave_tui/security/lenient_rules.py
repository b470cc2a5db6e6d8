"""`standard`'s share of strict's reflection and query checks: literals only.

`standard` may not refuse ordinary code, so computed names and f-string queries pass; but a
name or query the cell spells out literally is checked like the cell itself, which closes
`getattr(dataclasses, "builtins")` and `df.query("@pd.io.common.os.getcwd()")`.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell, literal_str
from cave_tui.security.rules import SecurityRule
from cave_tui.security.violations import SecurityViolation


class LiteralNameRule(SecurityRule):
    """Names read by string or by import that the cell could not write as `.name`.

    getattr/hasattr/setattr/delattr with a literal name, and `from m import name`
    (`from pandas import read_pickle as rp` is `pd.read_pickle` under another name).
    """

    node_types = (ast.Call, ast.ImportFrom)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for imp in cell.nodes(ast.ImportFrom):
            for alias in imp.names:
                problem = cell.name_problem(alias.name) if alias.name != "*" else None
                if problem:
                    yield cell.violation(
                        self.name, imp, f"'from {imp.module} import {alias.name}': {problem}"
                    )
        for call in cell.nodes(ast.Call):
            func = call.func
            if not (isinstance(func, ast.Name) and func.id in L.REFLECTION_BUILTINS):
                continue
            if len(call.args) < 2:
                continue
            attr = literal_str(call.args[1])
            problem = cell.name_problem(attr) if attr is not None else None
            if problem:
                yield cell.violation(self.name, call, f"{func.id}(..., {attr!r}): {problem}")


class QueryTextRule(SecurityRule):
    """Literal `query`/`eval` strings that walk attributes or call things: checked as code.

    pandas resolves `@name.attr` and calls what it finds, so a literal expression with an
    attribute or a call goes through the cell's rules (`@pd.io.common.os.getcwd()` is
    refused for the `os` hop); plain comparisons and non-literal strings pass.
    """

    node_types = (ast.Attribute,)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Attribute):
            call = cell.call_of.get(id(node))
            if node.attr not in L.QUERY_METHODS or call is None:
                continue
            expr = call.args[0] if call.args else None
            for k in call.keywords:
                if k.arg == "expr":
                    expr = k.value
            text = literal_str(expr)
            if text is None or expr is None:
                continue
            cleaned = text.replace("@", "")
            try:
                tree = ast.parse(cleaned, mode="exec")
            except (SyntaxError, ValueError, RecursionError, MemoryError):
                continue  # pandas will refuse it too
            if not any(isinstance(n, ast.Attribute | ast.Call) for n in ast.walk(tree)):
                continue
            for violation in cell.subcheck(cleaned, expr):
                violation.message = f"in .{node.attr}() string: {violation.message}"
                violation.rule = self.name
                yield violation
