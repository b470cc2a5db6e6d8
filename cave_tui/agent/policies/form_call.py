"""The final_answer() call of a cell, read and written again with the answer form's fields.

A small model computes the values and then calls `final_answer(f"@{n}[{n}]")` or
`final_answer(f"@{state}, @{rate:.1f}")`: the values where the field names belong. The call
to write instead keeps the model's own expressions, in the form:
`final_answer(f"@n_years[{n}]")`, `final_answer(f"@state[{state}], @murder[{rate:.1f}]")`.
"""

from __future__ import annotations

import ast

from cave_tui.agent.final_answer import FINAL_NAME
from cave_tui.agent.syntax import code_tree

__all__ = [
    "answer_call",
    "call_key",
    "form_call",
    "lacks_fields",
    "only_the_call",
    "with_form_call",
]


def answer_call(code: str) -> ast.Call | None:
    """The one `final_answer(...)` call of *code*, or None (none, several, or no Python)."""
    tree = code_tree(code)
    if tree is None:
        return None
    calls = [
        node
        for node in ast.walk(tree)
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id == FINAL_NAME
    ]
    return calls[0] if len(calls) == 1 else None


def call_key(code: str) -> str:
    """What identifies *code*'s final_answer call whatever its spacing: "" when it has none."""
    call = answer_call(code)
    return ast.dump(call) if call is not None else ""


def only_the_call(code: str) -> bool:
    """*code* is one statement: its final_answer call."""
    tree = code_tree(code)
    body = tree.body if tree is not None else []
    if len(body) != 1 or not isinstance(body[0], ast.Expr):
        return False
    call = body[0].value
    return (
        isinstance(call, ast.Call)
        and isinstance(call.func, ast.Name)
        and (call.func.id == FINAL_NAME)
    )


def lacks_fields(code: str, fields: list[str]) -> list[str]:
    """The *fields* whose `@name[` the text of *code*'s final_answer call cannot hold: its
    argument is a string, or an f-string with an `@` in its written text (the form tried),
    that lacks them. [] when it has them all, or when the text may come from elsewhere (a
    variable, a call, an f-string of values only: not known before it runs)."""
    call = answer_call(code)
    if call is None or len(call.args) != 1:
        return []
    arg = call.args[0]
    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
        text = arg.value
    elif isinstance(arg, ast.JoinedStr):
        text = "".join(
            part.value
            for part in arg.values
            if isinstance(part, ast.Constant) and isinstance(part.value, str)
        )
        if "@" not in text:
            return []  # `f"{answer}"`: the values may hold the form
    else:
        return []
    return [field for field in fields if f"@{field}[" not in text]


def form_call(code: str, fields: list[str]) -> str:
    """*code*'s final_answer call written with *fields*, each holding one of the call's values
    in order (an f-string's fields, the same one written twice counted once, or the whole
    argument for one field); "" when they do not pair up one to one."""
    call = answer_call(code)
    if call is None or len(call.args) != 1 or call.keywords or not fields:
        return ""
    arg = call.args[0]
    if isinstance(arg, ast.JoinedStr):
        found = [v for v in arg.values if isinstance(v, ast.FormattedValue)]
        values = list({ast.dump(v): v for v in found}.values())  # `@{n}[{n}]`: one value
    elif isinstance(arg, ast.Constant):
        return ""  # text the model wrote: no value of its code to put in the form
    else:
        values = [ast.FormattedValue(value=arg, conversion=-1, format_spec=None)]
    if len(values) != len(fields) or any(_holds_a_form(v) for v in values):
        return ""
    parts: list[ast.expr] = []
    for i, (field, value) in enumerate(zip(fields, values, strict=True)):
        parts += [ast.Constant(("" if i == 0 else "], ") + f"@{field}["), value]
    parts.append(ast.Constant("]"))
    rewritten = ast.Call(func=ast.Name(FINAL_NAME), args=[ast.JoinedStr(values=parts)], keywords=[])
    try:
        text = ast.unparse(ast.fix_missing_locations(rewritten))
    except (ValueError, RecursionError):
        return ""
    return text if code_tree(text) is not None else ""


def _holds_a_form(node: ast.AST) -> bool:
    """*node* has text with an `@` in it (`"@x[{}]".format(v)`): the form is already there."""
    return any(
        isinstance(n, ast.Constant) and isinstance(n.value, str) and "@" in n.value
        for n in ast.walk(node)
    )


def with_form_call(code: str, fields: list[str]) -> str:
    """*code* with its final_answer call replaced by `form_call`'s, the rest as it was; ""
    when there is no such call."""
    call, written = answer_call(code), form_call(code, fields)
    if call is None or not written or call.end_lineno is None or call.end_col_offset is None:
        return ""
    lines = code.splitlines(keepends=True)
    start = _offset(lines, call.lineno, call.col_offset)
    end = _offset(lines, call.end_lineno, call.end_col_offset)
    if call_key(code[start:end]) != ast.dump(call):  # lines counted unlike ast's: leave it
        return ""
    return code[:start] + written + code[end:]


def _offset(lines: list[str], lineno: int, col: int) -> int:
    """ast's position (a line, and a column in UTF-8 bytes) as an index into the code."""
    before = sum(len(line) for line in lines[: lineno - 1])
    return before + len(lines[lineno - 1].encode()[:col].decode(errors="ignore"))
