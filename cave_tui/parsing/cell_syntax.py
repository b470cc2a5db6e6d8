"""Whether a piece of a reply is code a cell can run: Python that parses, or IPython syntax."""

from __future__ import annotations

import ast
import io
import re
import tokenize


def is_cell_code(code: str) -> bool:
    """True when *code* parses as Python (top-level `await` allowed) or starts with IPython's
    `%` magic or `!` shell syntax, which does not parse as Python but is code."""
    try:
        compile(code, "<cell>", "exec", flags=ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
        return True
    except (SyntaxError, ValueError):
        return bool(re.match(r"\s*[%!]", code))


def ends_inside_string(code: str) -> bool:
    """True when *code* ends inside a string that goes on past the line: a triple-quoted
    one still open, or a quoted one continued by a backslash at the end of its line."""
    try:
        for _ in tokenize.generate_tokens(io.StringIO(code).readline):
            pass
    except tokenize.TokenError as error:
        reason = str(error.args[0]).lower()
        if "multi-line string" in reason or "triple-quoted" in reason:  # 3.11; 3.12 and later
            return True
        if "unterminated" in reason and "string" in reason:  # 3.12 and later: one quote open
            line = code.rstrip(" \t").rstrip("\r\n")
            return (len(line) - len(line.rstrip("\\"))) % 2 == 1
        return False
    except SyntaxError:
        return False
    return False
