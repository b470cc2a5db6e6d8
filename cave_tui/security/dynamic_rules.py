"""Attribute getters and classes made at run time from names the checker cannot see.

`operator.attrgetter("__globals__")` and `type(x)("E", (), ns)` reach the same places as
`getattr(f, name)` and `type("E", (), ns)`, which `ReflectionRule` already holds to literal,
allowed names; these rules hold their spellings to the same standard.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell, literal_str
from cave_tui.security.rules import SecurityRule
from cave_tui.security.violations import SecurityViolation

_GETTERS = frozenset({"attrgetter", "methodcaller"})
Span = tuple[tuple[int, int], tuple[int, int]]  # (start, end) as (line, column)
# Metaclasses an ordinary class may name: abstract base classes and enums.
_METACLASSES = frozenset({"ABCMeta", "EnumMeta", "EnumType"})


class AttrGetterRule(SecurityRule):
    """`operator.attrgetter`/`methodcaller`: direct calls with literal, allowed names only.

    `attrgetter("a.b", "c")` and `methodcaller("sum", axis=1)` are ordinary; a computed
    name (`attrgetter("__glo" + "bals__")`, `attrgetter(name)`), a private or refused name,
    or passing the getter itself around is not.
    """

    node_types = (ast.Name, ast.Attribute, ast.Call)

    def name_problem(self, name: str) -> str | None:
        if name in _GETTERS:
            return f"'{name}' reads attributes by name; call operator.{name}('name') directly"
        return None

    @staticmethod
    def _getter(cell: Cell, node: ast.AST) -> str | None:
        """Which getter *node* names: `attrgetter`, `operator.methodcaller`, an alias."""
        if isinstance(node, ast.Attribute) and node.attr in _GETTERS:
            return node.attr
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load):
            if node.id in _GETTERS:
                return node.id
            bound = cell.import_aliases.get(node.id, "")
            tail = bound.rpartition(".")[2]
            if tail in _GETTERS:
                return tail
        return None

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in [*cell.nodes(ast.Name), *cell.nodes(ast.Attribute)]:
            getter = self._getter(cell, node)
            if getter is None:
                continue
            call = cell.call_of.get(id(node))
            if call is None:
                yield cell.violation(
                    self.name, node, f"'{getter}' may only be called directly with literal names"
                )
                continue
            problem = self._call_problem(cell, getter, call)
            if problem:
                yield cell.violation(self.name, call, problem)

    @staticmethod
    def _call_problem(cell: Cell, getter: str, call: ast.Call) -> str | None:
        names = call.args if getter == "attrgetter" else call.args[:1]
        if getter == "attrgetter" and call.keywords:
            return "attrgetter() takes no keywords"
        if not names or any(isinstance(a, ast.Starred) for a in call.args):
            return f"{getter}() needs literal attribute names"
        for arg in names:
            text = literal_str(arg)
            if text is None:
                return f"{getter}() needs string literals as names, not computed ones"
            for part in text.split("."):
                problem = cell.name_problem(part)
                if part.startswith("_") or problem:
                    reason = problem or "names starting with '_' are private"
                    return f"{getter}({text!r}): {reason}"
        return None


class DispatchNameRule(SecurityRule):
    """pandas dispatch by name: `df.agg("_mgr")` reads `df._mgr` like `getattr` would.

    Literal function names given to `agg`/`aggregate`/`apply`/`transform` (directly, in a
    list, as dict values, or as the second item of a named aggregation) must be names the
    cell could write as `.name`. Column names (dict keys, the first item) are data. A name
    computed at run time is beyond the checker (docs/security.md lists it as open).
    """

    node_types = (ast.Call,)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for call in cell.nodes(ast.Call):
            method = call.func.attr if isinstance(call.func, ast.Attribute) else None
            if method not in L.DISPATCH_METHODS:
                continue
            for node in self._function_names(call):
                name = literal_str(node)
                if name is None:
                    continue
                problem = cell.name_problem(name)
                if name.startswith("_") or problem:
                    reason = problem or "names starting with '_' are private"
                    yield cell.violation(
                        self.name,
                        node,
                        f".{method}({name!r}): {reason}; pass a public method name or a function",
                    )

    @staticmethod
    def _function_names(call: ast.Call) -> Iterator[ast.AST]:
        values = [*call.args[:1], *(k.value for k in call.keywords if k.arg in (None, "func"))]
        named = [k.value for k in call.keywords if k.arg not in (None, "func")]
        for value in values:
            if isinstance(value, ast.List | ast.Tuple):
                yield from value.elts
            elif isinstance(value, ast.Dict):
                for item in value.values:
                    yield from item.elts if isinstance(item, ast.List | ast.Tuple) else [item]
            else:
                yield value
        for value in named:  # named aggregation: total=("units", "sum")
            if isinstance(value, ast.Tuple) and len(value.elts) == 2:
                yield value.elts[1]


class ClassFactoryRule(SecurityRule):
    """Classes built by calling a type: `type(x)("E", (), ns)`, `x.__class__(...)`, `ABCMeta(...)`.

    The one-argument `type(x)` is ordinary; calling what it returns with three arguments
    builds a class from a namespace dict whose keys may be computed (a `__reduce__` made of
    pieces). So is calling a metaclass (`abc.ABCMeta`, `enum.EnumMeta`). A three-argument
    call is refused when its callee is, or is computed from (`[type(x)][0]`, `(t := ...)`,
    a name bound to one), such an expression; `type(self)(a, b, c)` in a method stays
    allowed. `metaclass=` may only name ABCMeta or Enum's.
    """

    node_types = (ast.Call, ast.ClassDef)

    @staticmethod
    def _is_self(node: ast.AST) -> bool:
        return isinstance(node, ast.Name) and node.id in ("self", "cls")

    def _type_source(self, node: ast.AST) -> bool:
        """*node* is a type of something: `type(x)`, `x.__class__`, a metaclass by name."""
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == "type" and len(node.args) == 1:
                return not self._is_self(node.args[0])
            if node.func.id == "getattr" and len(node.args) >= 2:
                return literal_str(node.args[1]) == "__class__"
        if isinstance(node, ast.Attribute) and node.attr == "__class__":
            return not self._is_self(node.value)
        name = node.attr if isinstance(node, ast.Attribute) else None
        if isinstance(node, ast.Name):
            name = node.id
        return name is not None and (name.endswith("Meta") or name == "EnumType")

    @staticmethod
    def _span(node: ast.AST) -> Span:
        start = (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))
        end = (getattr(node, "end_lineno", 0) or 0, getattr(node, "end_col_offset", 0) or 0)
        return start, end

    def _contains_source(self, node: ast.AST, spans: list[Span]) -> bool:
        """A type source lies inside *node* (compared by source position, no tree walk)."""
        start, end = self._span(node)
        return any(start <= s_start and s_end <= end for s_start, s_end in spans)

    def _source_spans(self, cell: Cell) -> list[Span]:
        """Where the type sources are: `type(x)`, `x.__class__`, metaclasses, and names
        bound to an expression containing one (followed a few assignments deep)."""
        sources = [
            n
            for n in [*cell.nodes(ast.Call), *cell.nodes(ast.Attribute), *cell.nodes(ast.Name)]
            if self._type_source(n)
        ]
        spans = [self._span(n) for n in sources]
        names: set[str] = set()
        for _ in range(4):
            if not spans:
                break
            bound: set[str] = set()
            for assign in cell.nodes(ast.Assign, ast.NamedExpr, ast.AnnAssign):
                if assign.value is not None and self._contains_source(assign.value, spans):
                    targets = assign.targets if isinstance(assign, ast.Assign) else [assign.target]
                    bound.update(t.id for t in targets if isinstance(t, ast.Name))
            if not bound - names:
                break
            names |= bound
            spans += [
                self._span(n)
                for n in cell.nodes(ast.Name)
                if n.id in names and isinstance(n.ctx, ast.Load)
            ]
        return spans

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        calls = [c for c in cell.nodes(ast.Call) if len(c.args) + len(c.keywords) >= 3]
        spans = self._source_spans(cell) if calls else []
        for call in calls:
            if spans and self._contains_source(call.func, spans):
                yield cell.violation(
                    self.name,
                    call,
                    "calling a type with three arguments builds a class; write a class "
                    "statement instead",
                )
        for klass in cell.nodes(ast.ClassDef):
            for keyword in klass.keywords:
                if keyword.arg != "metaclass":
                    continue
                value = keyword.value
                name = value.attr if isinstance(value, ast.Attribute) else None
                if isinstance(value, ast.Name):
                    name = value.id
                if name not in _METACLASSES:
                    yield cell.violation(
                        self.name, keyword, "only ABCMeta or an Enum metaclass may be named"
                    )
