"""The rule interface and the four upstream rule types.

A rule sees a `Cell` (the parsed cell plus a shared index) and yields violations.
Upstream-style rules that only override `check(node)` still work: they are called for
every node of the types in `node_types` (every node if it is None).
"""

from __future__ import annotations

import ast
import re
from collections.abc import Callable, Iterable, Iterator

from cave_tui.security.cell import Cell, call_name
from cave_tui.security.lists import (
    ALLOWED_DUNDER_ATTRIBUTES,
    DENIED_MODULE_WORDS,
    FUTURE_FEATURES,
    FUTURE_MODULE,
)
from cave_tui.security.resolve import ModuleResolver
from cave_tui.security.violations import SecurityViolation


def is_dunder(name: str) -> bool:
    return len(name) > 4 and name.startswith("__") and name.endswith("__")


class SecurityRule:
    """Base class. Override `check(node)` (per node) or `check_cell(cell)` (whole cell)."""

    node_types: tuple[type, ...] | None = None
    description: str | None = None

    @property
    def name(self) -> str:
        return type(self).__name__

    def check(self, node: ast.AST) -> list[SecurityViolation]:
        """Upstream per-node API: violations for *node* alone."""
        return []

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        nodes = cell.all_nodes() if self.node_types is None else cell.nodes(*self.node_types)
        for node in nodes:
            for violation in self.check(node):
                if violation.lineno is None:
                    violation.lineno, violation.col = cell.position(node)
                if violation.rule == "SecurityRule":
                    violation.rule = self.name
                yield violation

    def name_problem(self, name: str) -> str | None:
        """Why attribute *name* may not be read by name (getattr, from-import), if so."""
        return None

    def __repr__(self) -> str:
        return f"{self.name}()"


# -- imports ------------------------------------------------------------------------------
class ImportRule(SecurityRule):
    """Forbidden imports (upstream), or with `allowed=` an allow-list of top-level modules.

    A forbidden name blocks its submodules too (`os` blocks `os.path`); a `from m import x`
    that binds a forbidden module (`from pandas.io.common import os`) is blocked as well.
    """

    node_types = (ast.Import, ast.ImportFrom)

    def __init__(
        self,
        forbidden_modules: Iterable[str] = (),
        *,
        allowed: Iterable[str] | None = None,
        resolver: ModuleResolver | None = None,
        attribute_rules: Iterable[SecurityRule] = (),
        exceptions: Iterable[str] = (),
    ) -> None:
        self.forbidden_modules = set(forbidden_modules)
        self.exceptions = tuple(exceptions)  # allowed submodules of forbidden ones
        self.allowed = None if allowed is None else frozenset(allowed)
        self.resolver = resolver
        self.attribute_rules = list(attribute_rules)
        self._cache: dict[str, str | None] = {}

    def _is_forbidden(self, module: str | None) -> bool:
        if not module:
            return False
        if any(module == e or module.startswith(e + ".") for e in self.exceptions):
            return False
        parts = module.split(".")
        return any(".".join(parts[:i]) in self.forbidden_modules for i in range(len(parts), 0, -1))

    def _module_problem(self, module: str) -> str | None:
        try:
            return self._cache[module]
        except KeyError:
            pass
        problem = self._uncached_problem(module)
        if len(self._cache) > 2048:
            self._cache.clear()
        self._cache[module] = problem
        return problem

    def _uncached_problem(self, module: str) -> str | None:
        if self._is_forbidden(module):
            return f"import of '{module}' is not allowed"
        if self.allowed is None:
            return None
        parts = module.split(".")
        if any(p.startswith("_") for p in parts):
            return f"import of private module '{module}' is not allowed"
        if self.resolver is not None:
            problem = self.resolver.module_problem(module)
            if problem:
                return f"import of '{module}' is not allowed ({problem})"
        elif parts[0] not in self.allowed:
            return f"import of '{module}' is not allowed (not on the allow-list)"
        lowered = module.lower()
        if any(word in lowered for word in DENIED_MODULE_WORDS):
            return f"import of '{module}' is not allowed"
        for part in parts[1:]:
            for rule in self.attribute_rules:
                problem = rule.name_problem(part)
                if problem:
                    return f"import of '{module}' is not allowed ({problem})"
        return None

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Import):
            for alias in node.names:
                problem = self._module_problem(alias.name)
                if problem:
                    yield cell.violation(self.name, node, problem)
        for imp in cell.nodes(ast.ImportFrom):
            yield from self._check_from(cell, imp)

    def _check_from(self, cell: Cell, node: ast.ImportFrom) -> Iterator[SecurityViolation]:
        if node.level:
            yield cell.violation(self.name, node, "relative imports are not allowed")
            return
        module = node.module or ""
        if module == FUTURE_MODULE and all(
            alias.name in FUTURE_FEATURES and alias.asname is None for alias in node.names
        ):
            return  # a compiler switch (`from __future__ import annotations`), not a module
        problem = self._module_problem(module)
        if problem:
            yield cell.violation(self.name, node, problem)
            return
        for alias in node.names:
            if alias.name == "*":
                if self.allowed is not None:
                    yield cell.violation(
                        self.name,
                        node,
                        f"'from {module} import *' is not allowed; name what you use",
                    )
                continue
            full = f"{module}.{alias.name}"
            if alias.name in self.forbidden_modules or self._is_forbidden(full):
                yield cell.violation(
                    self.name, node, f"'from {module} import {alias.name}' binds a forbidden module"
                )
                continue
            if self.allowed is None:
                continue
            problem = None
            if alias.name.startswith("_"):
                problem = f"import of private name '{alias.name}' is not allowed"
            for rule in self.attribute_rules:
                problem = problem or rule.name_problem(alias.name)
            if problem is None and self.resolver is not None:
                problem = self.resolver.member_problem(module, alias.name)
            if problem:
                yield cell.violation(
                    self.name, node, f"'from {module} import {alias.name}': {problem}"
                )


# -- functions ----------------------------------------------------------------------------
class FunctionRule(SecurityRule):
    """Forbidden functions, whether called or referenced (`f = eval`, `map(exec, ...)`).

    With `match_attributes=True` (upstream behaviour) a call of any attribute with that
    name (`x.eval(...)`) is flagged too; the named policies use False and leave methods to
    the attribute and pandas-query rules, so `re.compile` is not mistaken for `compile`.
    """

    node_types = (ast.Call, ast.Name)

    def __init__(
        self,
        forbidden_functions: Iterable[str],
        description: str | None = None,
        *,
        match_attributes: bool = True,
    ) -> None:
        self.forbidden_functions = set(forbidden_functions)
        self.description = description
        self.match_attributes = match_attributes

    def _message(self, text: str) -> str:
        return f"{text}: {self.description}" if self.description else text

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        forbidden = self.forbidden_functions
        for node in cell.nodes(ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in forbidden:
                yield cell.violation(
                    self.name, node, self._message(f"call of function '{func.id}' is not allowed")
                )
            elif (
                self.match_attributes and isinstance(func, ast.Attribute) and func.attr in forbidden
            ):
                yield cell.violation(
                    self.name, node, self._message(f"call of '.{func.attr}()' is not allowed")
                )
        for ref in cell.nodes(ast.Name):
            if ref.id in forbidden and isinstance(ref.ctx, ast.Load) and not cell.is_callee(ref):
                message = f"reference to function '{ref.id}' is not allowed"
                yield cell.violation(self.name, ref, self._message(message))

    def name_problem(self, name: str) -> str | None:
        if name in self.forbidden_functions:
            return f"'{name}' is not allowed"
        return None


# -- attributes ---------------------------------------------------------------------------
class AttributeRule(SecurityRule):
    """Forbidden attribute names (upstream), plus optional classes of names.

    `dunder=True` refuses `__x__` attributes outside `allowed`; `private=True` refuses any
    attribute starting with `_` outside `allowed`, except `self._x` inside a method of a
    class defined in the same cell. `prefixes`/`substrings` refuse names by shape. The same
    test applies to names read by `getattr(x, "name")`, `from m import name` and
    `case C(name=...)` patterns.
    """

    node_types = (ast.Attribute, ast.MatchClass)

    def __init__(
        self,
        forbidden_attributes: Iterable[str] = (),
        *,
        dunder: bool = False,
        private: bool = False,
        allowed: Iterable[str] = ALLOWED_DUNDER_ATTRIBUTES,
        prefixes: Iterable[str] = (),
        substrings: Iterable[str] = (),
        label: str | None = None,
    ) -> None:
        self.forbidden_attributes = set(forbidden_attributes)
        self.dunder = dunder
        self.private = private
        self.allowed = frozenset(allowed)
        self.prefixes = tuple(prefixes)
        self.substrings = tuple(s.lower() for s in substrings)
        self.label = label

    def name_problem(self, name: str) -> str | None:
        if name in self.allowed:
            return None
        if name in self.forbidden_attributes:
            return f"attribute '{name}' is not allowed" + (f" ({self.label})" if self.label else "")
        if self.private and name.startswith("_"):
            return f"attribute '{name}' is not allowed (names starting with '_' are private)"
        if self.dunder and is_dunder(name):
            return f"dunder attribute '{name}' is not allowed"
        if self.prefixes and name.startswith(self.prefixes):
            return f"attribute '{name}' is not allowed (introspection)"
        if self.substrings:
            lowered = name.lower()
            for part in self.substrings:
                if part in lowered:
                    return f"attribute '{name}' is not allowed"
        return None

    def _own_private(self, cell: Cell, node: ast.Attribute) -> bool:
        """`self._x` inside a method of a class defined in this cell (not a library's)."""
        if is_dunder(node.attr) or not isinstance(node.value, ast.Name):
            return False
        line = node.lineno
        for func, owner in cell.methods:
            if not func.lineno <= line <= (func.end_lineno or func.lineno):
                continue
            args = func.args.posonlyargs + func.args.args
            if args and args[0].arg == node.value.id:
                return all(
                    isinstance(b, ast.Name) and (b.id in cell.class_names or b.id == "object")
                    for b in owner.bases
                )
        return False

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        guard_stores = self.dunder or self.private
        for node in cell.nodes(ast.Attribute):
            if guard_stores and is_dunder(node.attr) and not isinstance(node.ctx, ast.Load):
                yield cell.violation(
                    self.name, node, f"assigning or deleting '{node.attr}' is not allowed"
                )
                continue
            problem = self.name_problem(node.attr)
            if (
                problem
                and self.private
                and node.attr.startswith("_")
                and self._own_private(cell, node)
            ):
                problem = None
            if problem:
                yield cell.violation(self.name, node, problem)
        for match_class in cell.nodes(ast.MatchClass):
            for attr in match_class.kwd_attrs:
                problem = self.name_problem(attr)
                if problem:
                    yield cell.violation(self.name, match_class, f"pattern reads {problem}")


# -- regular expressions ------------------------------------------------------------------
class RegexRule(SecurityRule):
    """Refuse cells whose transformed source matches a pattern (or any of several).

    Upstream signature `RegexRule(pattern, description=None)`; a list of patterns (as in
    the upstream README) is accepted too. Matches are searched in the text IPython will
    compile, so `!rm -rf` shows up as the `get_ipython().system('rm -rf')` it becomes.
    """

    def __init__(self, pattern: str | Iterable[str], description: str | None = None) -> None:
        patterns = [pattern] if isinstance(pattern, str) else list(pattern)
        if not patterns:
            raise ValueError("RegexRule needs at least one pattern")
        self.patterns = []
        for p in patterns:
            try:
                self.patterns.append(re.compile(p, re.MULTILINE | re.DOTALL))
            except re.error as exc:
                raise ValueError(f"Invalid regex pattern '{p}': {exc}") from None
        self.pattern = self.patterns[0]
        self.description = description or f"matches forbidden pattern {patterns[0]!r}"

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        source = cell.prepared.source
        for pattern in self.patterns:
            match = pattern.search(source)
            if match:
                lineno = source.count("\n", 0, match.start()) + 1 + cell.prepared.line_offset
                col = match.start() - (source.rfind("\n", 0, match.start()) + 1) + 1
                yield SecurityViolation(
                    message=f"code {self.description}", rule=self.name, lineno=lineno, col=col
                )


def build_name_problem(rules: Iterable[SecurityRule]) -> Callable[[str], str | None]:
    """One function answering 'may attribute NAME be read by name?' for all *rules*."""
    answering = [r for r in rules if type(r).name_problem is not SecurityRule.name_problem]

    def name_problem(name: str) -> str | None:
        for rule in answering:
            problem = rule.name_problem(name)
            if problem:
                return problem
        return None

    return name_problem


__all__ = [
    "AttributeRule",
    "FunctionRule",
    "ImportRule",
    "RegexRule",
    "SecurityRule",
    "build_name_problem",
    "call_name",
    "is_dunder",
]
