"""A cell's or a line's syntax tree, read without raising: what the hints and checks parse."""

from __future__ import annotations

import ast


def code_tree(code: str) -> ast.Module | None:
    """*code*'s syntax tree, or None when it does not parse (a syntax error, a null byte,
    nesting too deep for the parser): the runtime says so, not the reader."""
    try:
        return ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
