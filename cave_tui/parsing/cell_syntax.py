"""Whether a piece of a reply is code a cell can run: Python that parses, or IPython syntax."""

from __future__ import annotations

import ast
import re


def is_cell_code(code: str) -> bool:
    """True when *code* parses as Python (top-level `await` allowed) or starts with IPython's
    `%` magic or `!` shell syntax, which does not parse as Python but is code."""
    try:
        compile(code, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        return True
    except (SyntaxError, ValueError):
        return bool(re.match(r"\s*[%!]", code))
