"""The functions and classes the host itself sent to a runtime, parsed from its own cells.

A dump keeps a definition as source only when the host sent that very source (a cell of
the agent, of the user, a restore); what the runtime reports about its functions (a kernel
may report anything) is checked against these, never taken on its word.
"""

from __future__ import annotations

import ast
import hashlib
import re
import textwrap
from collections import OrderedDict
from functools import cache

from cave_tui.runtime.shipped.persist import DEFINITION_SCAN_CHARS, definition_of

PER_NAME = 16  # sources kept per name (the latest ones)
_DEFINING = re.compile(r"\b(?:def|class|lambda)\b")  # a cell without these defines nothing


@cache
def _transformer() -> object:
    from IPython.core.inputtransformer2 import TransformerManager

    return TransformerManager()


def _parsed(code: str) -> tuple[str, ast.Module] | None:
    """*code* as IPython compiles it (magics and `!` lines rewritten) and its tree, or None.
    Valid Python runs as written (IPython's transforms change only what Python cannot
    parse), so only a cell that does not parse is transformed: one parse for most cells."""
    try:
        return code, ast.parse(code)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        pass
    try:
        transformed = _transformer().transform_cell(code)  # type: ignore[attr-defined]
        return (transformed, ast.parse(transformed)) if isinstance(transformed, str) else None
    except Exception:  # IPython could not transform it, or it is not Python: nothing ran
        return None


def _key(source: str) -> str:
    return hashlib.blake2b(source.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


def definitions_in(code: str, tree: ast.Module) -> list[tuple[str, str]]:
    """(name, source) of each function and class *code* (parsed as *tree*) defines outside
    any function or class body (in `if`, `for`, `try`… too, dedented), and of each
    `name = lambda …`."""
    lines = code.splitlines(keepends=True)
    found: list[tuple[str, str]] = []
    pending: list[ast.stmt] = list(tree.body)
    while pending:
        node = pending.pop(0)
        defined = definition_of(node, code, lines)
        if defined is not None:
            name, text, is_lambda = defined
            if node.col_offset and not is_lambda:  # inside a block: dedented, as reported
                text = textwrap.dedent(text)
            found.append((name, text))
        else:
            for part in ("body", "orelse", "finalbody", "handlers", "cases"):
                for child in getattr(node, part, None) or ():
                    if isinstance(child, ast.stmt):
                        pending.append(child)
                    elif isinstance(child, ast.ExceptHandler | ast.match_case):
                        pending.extend(child.body)
    return found


class SentDefinitions:
    """Per name, the latest sources of definitions the host sent (`PER_NAME` of them)."""

    def __init__(self) -> None:
        self._by_name: dict[str, OrderedDict[str, str]] = {}

    def record(self, code: str) -> None:
        """Note the definitions of the cell *code* the host is about to run."""
        if len(code) > DEFINITION_SCAN_CHARS or _DEFINING.search(code) is None:
            return
        parsed = _parsed(code)
        if parsed is None:
            return
        for name, source in definitions_in(*parsed):
            kept = self._by_name.setdefault(name, OrderedDict())
            key = _key(source)
            kept.pop(key, None)
            kept[key] = source
            while len(kept) > PER_NAME:
                kept.popitem(last=False)

    def sent(self, name: str, source: str) -> str | None:
        """The host's own copy of *source* when it sent that very definition of *name*."""
        kept = self._by_name.get(name)
        if kept is None:
            return None
        return kept.get(_key(source))
