"""A hint for `a, b = f(...)` where f returns another number of values.

`chi2, p = chi2_contingency(table)` fails with "too many values to unpack (expected 2)": the
call returns four. The hint names the call and what it returns, and how to keep the result
whole; for a SciPy function, that its result has `.statistic` and `.pvalue`.
"""

from __future__ import annotations

import ast
import re

from cave_tui.agent.syntax import code_tree

_UNPACK = re.compile(
    r"too many values to unpack \(expected (?P<expected>\d+)\)"
    r"|not enough values to unpack \(expected (?P<wanted>\d+), got (?P<got>\d+)\)"
)


def unpack_hint(line: str, code: str, last: str) -> str:
    """The hint for an unpacking error (*last*, the error's last line) on the failing *line*
    of *code*; "" when the error or the line is not of that form."""
    found = _UNPACK.search(last)
    if found is None:
        return ""
    tree = code_tree(line.strip())
    if tree is None:
        return ""
    assign = next((n for n in ast.walk(tree) if isinstance(n, ast.Assign)), None)
    if assign is None or not isinstance(assign.value, ast.Call):
        return ""
    target = assign.targets[0]
    if not isinstance(target, ast.Tuple | ast.List):
        return ""
    names = ast.unparse(target)
    func = ast.unparse(assign.value.func)
    if found["got"]:
        returns = f"returns {found['got']} values, and `{names}` takes {found['wanted']}"
    else:
        returns = f"returns more than the {found['expected']} values `{names}` takes"
    scipy = _from_scipy(func, code)
    parts = " (a SciPy test's result has .statistic and .pvalue)" if scipy else ""
    return (
        f"`{func}(...)` {returns}. Keep its result whole, result = {func}(...), and use the "
        f"parts you need{parts}; print(result) shows them."
    )


def _from_scipy(func: str, code: str) -> bool:
    """*func* is SciPy's: called as `scipy.…`/`stats.…`, or imported from scipy in *code*."""
    if func.startswith(("scipy.", "stats.", "st.", "ss.")):
        return True
    name = func.rsplit(".", 1)[-1]
    pattern = rf"^\s*from\s+scipy[\w.]*\s+import\s+[^#\n]*\b{re.escape(name)}\b"
    return re.search(pattern, code, re.MULTILINE) is not None
