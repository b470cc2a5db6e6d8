"""Chains from allowed modules to what is not allowed; monkeypatching; other agents' runtimes."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell, chain, literal_str
from cave_tui.security.resolve import ModuleResolver
from cave_tui.security.rules import SecurityRule
from cave_tui.security.violations import SecurityViolation


# -- modules ----------------------------------------------------------------------------------
class ModuleRule(SecurityRule):
    """Chains from allowed modules to modules or objects that are not allowed.

    `json.codecs`, `pd.io.common.os`, `dataclasses.builtins`, `np.ctypeslib`: each hop is
    looked up in the real module, so re-exports nobody listed are caught. Roots are the
    cell's imports, simple aliases (`m = pd.io`) and the usual notebook names (`pd`, `np`,
    `plt`). Also refuses assigning or deleting attributes of modules (monkeypatching).
    """

    node_types = (ast.Attribute, ast.Call)

    def __init__(self, resolver: ModuleResolver, aliases: dict[str, str] | None = None) -> None:
        self.resolver = resolver
        self.aliases = dict(L.CONVENTIONAL_ALIASES)
        self.aliases.update({m: m for m in resolver.allowed})
        self.aliases.update(aliases or {})

    def _root(self, cell: Cell, name: str, depth: int = 0) -> tuple[str, list[str]] | None:
        if name in cell.import_aliases:
            return cell.import_aliases[name], []
        bound = cell.simple_aliases.get(name)
        if bound is not None and depth < 5:
            base, attrs = chain(bound)
            if isinstance(base, ast.Name):
                found = self._root(cell, base.id, depth + 1)
                if found:
                    return found[0], found[1] + attrs
            return None
        if name in self.aliases and name not in cell.assigned_names:
            return self.aliases[name], []
        return None

    def _library_owner(self, root: str, attrs: list[str]) -> str | None:
        """Name of the module or library class at root.attrs, if it is one."""
        import types

        value = self.resolver.value(root, attrs)
        if isinstance(value, types.ModuleType):
            return f"module '{value.__name__}'"
        if isinstance(value, type):
            return f"class '{value.__module__}.{value.__qualname__}'"
        return None

    @staticmethod
    def _class_of_instance(node: ast.AST) -> bool:
        """`x.__class__` or `type(x)`: a class reached through an instance."""
        if isinstance(node, ast.Attribute) and node.attr == "__class__":
            return True
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "type"
            and len(node.args) == 1
        )

    @staticmethod
    def _is_getattr(node: ast.AST) -> bool:
        return (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "getattr"
            and len(node.args) >= 2
            and literal_str(node.args[1]) is not None
        )

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        attributes = cell.nodes(ast.Attribute)
        getattrs = [c for c in cell.nodes(ast.Call) if self._is_getattr(c)]
        roots = set(cell.import_aliases) | set(cell.simple_aliases)
        bases = {a.value.id for a in attributes if isinstance(a.value, ast.Name)}
        bases.update(arg.id for c in getattrs if isinstance(arg := c.args[0], ast.Name))
        candidates = bases & self.aliases.keys()
        if candidates:
            roots.update(n for n in candidates if n not in cell.assigned_names)
        inner = {id(a.value) for a in attributes}
        inner.update(id(c.args[0]) for c in getattrs)
        for node in [*attributes, *getattrs]:
            if id(node) in inner:
                continue  # not the top of its chain
            base: ast.AST = node
            while True:
                if isinstance(base, ast.Attribute):
                    base = base.value
                elif isinstance(base, ast.Call) and self._is_getattr(base):
                    base = base.args[0]
                else:
                    break
            if not (isinstance(base, ast.Name) and base.id in roots):
                continue
            _base, attrs = chain(node)
            found = self._root(cell, base.id)
            if found is None:
                continue
            root, prefix = found
            full = prefix + attrs
            result = self.resolver.walk(root, full)
            if result is not None:
                yield cell.violation(self.name, node, result[1])
                continue
            if (
                full
                and full[-1] in L.GENERIC_IO_FUNCTIONS
                and not cell.is_callee(node)
                and callable(self.resolver.value(root, full))
            ):
                dotted = ".".join(full)
                yield cell.violation(
                    self.name, node, f"'{dotted}' does I/O and may only be called directly"
                )
            if isinstance(getattr(node, "ctx", None), ast.Store | ast.Del):
                owner = self._library_owner(root, full[:-1])
                if owner:
                    yield cell.violation(
                        self.name, node, f"changing attributes of {owner} is not allowed"
                    )
        for node in attributes:
            if not isinstance(node.ctx, ast.Load) and self._class_of_instance(node.value):
                yield cell.violation(
                    self.name, node, "changing a class through an instance is not allowed"
                )
        for node in cell.nodes(ast.Call):
            func = node.func
            if isinstance(func, ast.Name) and func.id in ("setattr", "delattr") and node.args:
                target = node.args[0]
                if self._class_of_instance(target):
                    yield cell.violation(
                        self.name, node, f"{func.id}() on a class reached through an instance"
                    )
                    continue
                base, attrs = chain(target)
                if isinstance(base, ast.Name) and base.id in roots:
                    found = self._root(cell, base.id)
                    owner = found and self._library_owner(found[0], found[1] + attrs)
                    if owner:
                        yield cell.violation(self.name, node, f"{func.id}() on {owner}")


class HostRule(SecurityRule):
    """An injected agent's runtime: `sub.runtime.execute("...")` runs a string unchecked.

    Orchestrators may read results (`await sub.runtime.retrieve("x")`) and run sub-agents
    (`await sub.run(task)`), but not drive another runtime's execution or checker.
    """

    node_types = (ast.Attribute,)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Attribute):
            if node.attr not in L.RUNTIME_METHODS:
                continue
            base, attrs = chain(node.value)
            if "runtime" in attrs or (isinstance(base, ast.Name) and base.id == "runtime"):
                yield cell.violation(
                    self.name, node, f"'runtime.{node.attr}' of another agent is not allowed"
                )
