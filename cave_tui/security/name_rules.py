"""Names, class hooks and string literals that only make sense as part of an escape."""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell
from cave_tui.security.reflection_rules import template_walks
from cave_tui.security.rules import SecurityRule, is_dunder
from cave_tui.security.violations import SecurityViolation


# -- names -------------------------------------------------------------------------------
class NameRule(SecurityRule):
    """Dunder names (`__builtins__`, `__import__`, `__loader__`) and IPython's history names.

    `strict=True` refuses every name starting with `__` (bar `__name__`/`__doc__`, and
    `__slots__` in a class body) and IPython's `_ih`/`_oh`/`_i3`-style variables, and reads
    of `In`/`Out` (the same history) unless the cell binds them itself.
    """

    node_types = (ast.Name,)

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Name):
            name = node.id
            if (
                self.strict
                and name in L.IPYTHON_HISTORY_NAMES
                and isinstance(node.ctx, ast.Load)
                and name not in cell.assigned_names
            ):
                yield cell.violation(
                    self.name,
                    node,
                    f"IPython history variable '{name}' is not allowed; keep results in your "
                    "own variables",
                )
            if not name.startswith("_"):
                continue
            if name.startswith("__"):
                if name in L.ALLOWED_DUNDER_NAMES and (
                    name != "__slots__" or isinstance(node.ctx, ast.Store)
                ):
                    continue
                if self.strict or is_dunder(name):
                    yield cell.violation(self.name, node, f"name '{name}' is not allowed")
            elif self.strict and L.IPYTHON_PRIVATE_NAME.match(name):
                yield cell.violation(
                    self.name, node, f"IPython history variable '{name}' is not allowed"
                )


class HookRule(SecurityRule):
    """Definitions of special methods that run code outside the checked cell.

    `__reduce__`-style hooks hand a callable to whoever unpickles or copies the object (a
    saved session, the host); strict also refuses every dunder method outside the usual
    protocol list (`__getattr__`, `__del__`, `__array_interface__`, `__init_subclass__`).
    """

    node_types = (ast.FunctionDef, ast.AsyncFunctionDef, ast.Assign, ast.AnnAssign)

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict

    def _problem(self, name: str) -> str | None:
        if name in L.PICKLE_HOOKS:
            return f"defining '{name}' (a pickle/copy hook) is not allowed"
        if self.strict and is_dunder(name) and name not in L.ALLOWED_DUNDER_DEFS:
            return f"defining special method '{name}' is not allowed"
        return None

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.FunctionDef, ast.AsyncFunctionDef):
            problem = self._problem(node.name)
            if problem:
                yield cell.violation(self.name, node, problem)
        for klass in cell.nodes(ast.ClassDef):
            for node in klass.body:
                if isinstance(node, ast.Assign):
                    targets = node.targets
                elif isinstance(node, ast.AnnAssign):
                    targets = [node.target]
                else:
                    continue
                for target in targets:
                    if isinstance(target, ast.Name) and target.id not in L.ALLOWED_DUNDER_NAMES:
                        problem = self._problem(target.id)
                        if problem:
                            yield cell.violation(self.name, target, problem)


# -- strings ----------------------------------------------------------------------------------
_DUNDER_INSIDE = re.compile(r"__(?!main__|name__)[A-Za-z]\w*__")
_ANNOTATION_OK = re.compile(r"^[A-Za-z][\w.\[\], |]*$")


class StringRule(SecurityRule):
    """String literals that only make sense as part of an escape.

    Dunder names (`"__class__"`, `"__globals__"`: used with subscripts, dicts and
    setattr-like APIs), matplotlib/pandas settings that import modules or run programs,
    format fields that walk into private attributes, and string annotations that are not
    plain type names. Paths and URLs are data here; `IORule` judges the calls they reach.
    """

    node_types = (ast.Constant,)

    def __init__(self, *, strict: bool = True) -> None:
        self.strict = strict  # False: only dunder names and private format fields

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        docstrings = cell.docstrings
        annotations = self._annotations(cell)
        for node in cell.nodes(ast.Constant):
            text = node.value
            if text.__class__ is not str or not text:
                continue
            problem = self._problem(cell, text, id(node) in docstrings, id(node) in annotations)
            if problem:
                yield cell.violation(self.name, node, problem)

    @staticmethod
    def _annotations(cell: Cell) -> set[int]:
        found = {id(a.annotation) for a in cell.nodes(ast.arg) if a.annotation is not None}
        found.update(id(a.annotation) for a in cell.nodes(ast.AnnAssign))
        found.update(
            id(f.returns)
            for f in cell.nodes(ast.FunctionDef, ast.AsyncFunctionDef)
            if f.returns is not None
        )
        return found

    def _problem(self, cell: Cell, text: str, doc: bool, annotation: bool) -> str | None:
        short = text if len(text) <= 40 else text[:37] + "..."
        first = text[0]
        if (
            first == "_"
            and text not in L.ALLOWED_DUNDER_STRINGS
            and re.match(r"^__[A-Za-z]\w*$", text)
        ):
            return f"string {short!r} names a dunder attribute"
        if doc:
            return None
        if self.strict and "__" in text and _DUNDER_INSIDE.search(text):
            return f"string {short!r} contains a dunder name"
        if self.strict:  # paths and URLs are data here; io_rules judges the calls they reach
            if L.RISKY_CONFIG_STRING.match(text):
                return f"setting {short!r} makes libraries import modules or run programs"
            if ("<" in text or "file:" in text) and L.XML_EXTERNAL.search(text):
                return "XML entities, XSLT document() and file: URLs read files"
        if "{" in text and "." in text:
            try:
                field = template_walks(text)
            except ValueError:
                field = None
            if field and any(
                p.startswith("_") or cell.name_problem(p) for p in field.split(".")[1:]
            ):
                return f"format field {{{field}}} walks into a private attribute"
        if not self.strict:
            return None
        if annotation and (not _ANNOTATION_OK.match(text) or re.search(r"(^|\W)_", text)):
            return f"string annotation {short!r} is not a plain type name"
        return None
