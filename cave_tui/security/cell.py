"""One parsed cell, indexed once so every rule can look things up cheaply.

A single pass records each node's parent and buckets nodes by type; rules then visit only
the node types they care about. Facts several rules need (import aliases, in-memory buffer
names, classes defined here) are computed on first use.
"""

from __future__ import annotations

import ast
from collections import defaultdict
from collections.abc import Callable, Iterator
from functools import cached_property
from typing import Any, TypeVar, overload

from cave_tui.security.lists import BUFFER_CONSTRUCTORS
from cave_tui.security.source import PreparedCell
from cave_tui.security.violations import SecurityViolation

_SKIP_FIELDS = frozenset({"ctx", "op", "ops", "type_comment", "kind"})
_fields_cache: dict[type[ast.AST], tuple[str, ...]] = {}
_Node = TypeVar("_Node", bound=ast.AST)


def _fields(cls: type[ast.AST]) -> tuple[str, ...]:
    names = _fields_cache.get(cls)
    if names is None:
        names = tuple(f for f in cls._fields if f not in _SKIP_FIELDS)
        _fields_cache[cls] = names
    return names


def chain(node: ast.AST) -> tuple[ast.AST, list[str]]:
    """`a.b.c` -> (Name a, ["b", "c"]); `getattr(a, "b")` counts as `a.b`."""
    attrs: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            attrs.append(node.attr)
            node = node.value
            continue
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            attrs.append(node.args[1].value)
            node = node.args[0]
            continue
        break
    attrs.reverse()
    return node, attrs


def literal_str(node: ast.AST | None) -> str | None:
    """The value of a string literal (implicit concatenation included), else None."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return node.value
    return None


def call_name(func: ast.AST) -> str | None:
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute):
        return func.attr
    return None


class Cell:
    """A parsed cell plus the index the rules share."""

    def __init__(
        self,
        tree: ast.AST,
        prepared: PreparedCell,
        subcheck: Callable[[str, ast.AST], list[SecurityViolation]] | None = None,
        depth: int = 0,
        name_problem: Callable[[str], str | None] | None = None,
    ) -> None:
        self.tree = tree
        self.name_problem: Callable[[str], str | None] = name_problem or (lambda _name: None)
        self.prepared = prepared
        self.depth = depth
        self._subcheck = subcheck
        self._lines: list[str] | None = None
        self.by_type: dict[type[ast.AST], list[ast.AST]] = {}
        self._index()

    # -- indexing ----------------------------------------------------------------------
    def _index(self) -> None:
        by_type = self.by_type
        stack: list[ast.AST] = [self.tree]
        pop = stack.pop
        push = stack.append
        node_type = ast.AST
        while stack:
            node = pop()
            cls = node.__class__
            bucket = by_type.get(cls)
            if bucket is None:
                bucket = by_type[cls] = []
            bucket.append(node)
            for name in _fields_cache.get(cls) or _fields(cls):
                value = getattr(node, name, None)
                if value is None:
                    continue
                if value.__class__ is list:
                    for child in value:
                        if isinstance(child, node_type):
                            push(child)
                elif isinstance(value, node_type):
                    push(value)

    @overload
    def nodes(self, node_type: type[_Node], /) -> list[_Node]: ...
    @overload
    def nodes(self, *types: type[ast.AST]) -> list[Any]: ...
    def nodes(self, *types: type[ast.AST]) -> list[Any]:
        """All nodes of the given types (a list: rules iterate it once, cheaply)."""
        if len(types) == 1:
            return self.by_type.get(types[0], [])
        found: list[Any] = []
        for t in types:
            found.extend(self.by_type.get(t, ()))
        return found

    def all_nodes(self) -> Iterator[ast.AST]:
        for bucket in list(self.by_type.values()):
            yield from bucket

    @cached_property
    def call_of(self) -> dict[int, ast.Call]:
        """id(callee expression) -> the Call that calls it."""
        return {id(c.func): c for c in self.nodes(ast.Call)}

    def is_callee(self, node: ast.AST) -> bool:
        return id(node) in self.call_of

    @cached_property
    def parents(self) -> dict[int, ast.AST]:
        """id(node) -> parent node; built on first use (few rules need it)."""
        parents: dict[int, ast.AST] = {}
        for node in self.all_nodes():
            for child in ast.iter_child_nodes(node):
                parents[id(child)] = node
        return parents

    def parent(self, node: ast.AST) -> ast.AST | None:
        return self.parents.get(id(node))

    # -- positions ---------------------------------------------------------------------
    def position(self, node: ast.AST | None) -> tuple[int | None, int | None]:
        """(line, 1-based column) of *node* in the code as written."""
        lineno = getattr(node, "lineno", None)
        if lineno is None:
            return None, None
        col_offset = getattr(node, "col_offset", 0) or 0
        if isinstance(node, ast.Attribute) and node.end_lineno and node.end_col_offset:
            # Point at the attribute name itself, not the start of the whole chain.
            start = node.end_col_offset - len(node.attr.encode())
            if start >= col_offset or node.end_lineno != lineno:
                lineno, col_offset = node.end_lineno, start
        if self._lines is None:
            self._lines = self.prepared.source.splitlines()
        if 0 < lineno <= len(self._lines):
            line = self._lines[lineno - 1]
            if not line.isascii():  # ast columns count UTF-8 bytes
                col_offset = len(line.encode()[:col_offset].decode(errors="ignore"))
        return lineno + self.prepared.line_offset, col_offset + self.prepared.col_shift + 1

    def violation(self, rule: str, node: ast.AST | None, message: str) -> SecurityViolation:
        lineno, col = self.position(node)
        return SecurityViolation(message=message, rule=rule, lineno=lineno, col=col)

    def subcheck(self, text: str, at: ast.AST) -> list[SecurityViolation]:
        """Check *text* (code inside a string, e.g. a pandas query) with the same rules."""
        if self._subcheck is None or self.depth >= 2:
            return []
        found = self._subcheck(text, at)
        lineno, col = self.position(at)
        for violation in found:
            violation.lineno, violation.col = lineno, col
        return found

    # -- shared facts ------------------------------------------------------------------
    @cached_property
    def import_aliases(self) -> dict[str, str]:
        """Names bound by imports in this cell -> dotted module path."""
        aliases: dict[str, str] = {}
        for node in self.nodes(ast.Import):
            for alias in node.names:
                if alias.asname:
                    aliases[alias.asname] = alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    aliases[top] = top
        for imp in self.nodes(ast.ImportFrom):
            if imp.level or not imp.module:
                continue
            for alias in imp.names:
                if alias.name != "*":
                    aliases[alias.asname or alias.name] = f"{imp.module}.{alias.name}"
        return aliases

    @cached_property
    def assigned_names(self) -> set[str]:
        """Every name this cell binds by assignment, loop, with, def, class or argument."""
        names = {n.id for n in self.nodes(ast.Name) if isinstance(n.ctx, ast.Store | ast.Del)}
        names.update(n.name for n in self.nodes(ast.FunctionDef, ast.AsyncFunctionDef))
        names.update(n.name for n in self.nodes(ast.ClassDef))
        names.update(a.arg for a in self.nodes(ast.arg))
        return names

    @cached_property
    def simple_aliases(self) -> dict[str, ast.AST]:
        """`m = pd.io` style assignments: name -> the expression it was bound to."""
        found: dict[str, ast.AST] = {}
        for node in self.nodes(ast.Assign):
            if (
                len(node.targets) == 1
                and isinstance(node.targets[0], ast.Name)
                and isinstance(node.value, ast.Name | ast.Attribute)
            ):
                found[node.targets[0].id] = node.value
        for walrus in self.nodes(ast.NamedExpr):
            if isinstance(walrus.value, ast.Name | ast.Attribute):
                found[walrus.target.id] = walrus.value
        return found

    @cached_property
    def _bindings(self) -> dict[str, list[tuple[tuple[int, int], bool]]]:
        """name -> [((line, col), bound to an in-memory buffer?)] in source order."""
        found: defaultdict[str, list[tuple[tuple[int, int], bool]]] = defaultdict(list)

        def is_buffer(value: ast.AST | None) -> bool:
            return isinstance(value, ast.Call) and call_name(value.func) in BUFFER_CONSTRUCTORS

        def add(target: ast.AST, buffer: bool) -> None:
            if isinstance(target, ast.Name):
                found[target.id].append(((target.lineno, target.col_offset), buffer))

        for node in self.nodes(ast.Assign):
            for target in node.targets:
                add(target, is_buffer(node.value))
        for node in self.nodes(ast.AnnAssign, ast.NamedExpr, ast.AugAssign):
            add(node.target, is_buffer(getattr(node, "value", None)))
        for item in self.nodes(ast.withitem):
            if item.optional_vars is not None:
                add(item.optional_vars, is_buffer(item.context_expr))
        for node in self.nodes(ast.For, ast.AsyncFor):
            add(node.target, False)
        for bindings in found.values():
            bindings.sort()
        return found

    def is_buffer_expr(self, node: ast.AST) -> bool:
        """An in-memory buffer: `io.BytesIO()` itself, or a name last bound to one above."""
        if isinstance(node, ast.Call):
            return call_name(node.func) in BUFFER_CONSTRUCTORS
        if not isinstance(node, ast.Name):
            return False
        where = (node.lineno, node.col_offset)
        last = None
        for position, buffer in self._bindings.get(node.id, ()):
            if position < where:
                last = buffer
        return bool(last)

    @cached_property
    def methods(self) -> list[tuple[ast.FunctionDef | ast.AsyncFunctionDef, ast.ClassDef]]:
        """(method, class) for functions defined directly in a class body of this cell."""
        found = []
        for klass in self.nodes(ast.ClassDef):
            for item in klass.body:
                if isinstance(item, ast.FunctionDef | ast.AsyncFunctionDef):
                    found.append((item, klass))
        return found

    @cached_property
    def defined_functions(self) -> set[str]:
        """Names of the functions this cell defines (their bodies are checked with it)."""
        return {n.name for n in self.nodes(ast.FunctionDef, ast.AsyncFunctionDef)}

    @cached_property
    def class_names(self) -> set[str]:
        return {n.name for n in self.nodes(ast.ClassDef)}

    @cached_property
    def docstrings(self) -> set[int]:
        """ids of string constants that are bare expression statements (docstrings)."""
        return {
            id(n.value)
            for n in self.nodes(ast.Expr)
            if isinstance(n.value, ast.Constant) and isinstance(n.value.value, str)
        }
