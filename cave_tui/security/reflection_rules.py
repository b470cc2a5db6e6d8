"""Attribute access by computed name: getattr & co, type(), format templates, pandas query."""

from __future__ import annotations

import ast
import builtins
import re
import string
from collections.abc import Iterator

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell, call_name, chain, literal_str
from cave_tui.security.rules import SecurityRule
from cave_tui.security.violations import SecurityViolation

# -- reflection ---------------------------------------------------------------------------
_TYPE_OK_CALLERS = frozenset({"isinstance", "issubclass"})


class ReflectionRule(SecurityRule):
    """Attribute access by computed name, and classes built from runtime names.

    getattr/hasattr/setattr/delattr: only direct calls whose name is a string literal that
    would itself be allowed as `obj.name`. type(): one argument only (three build a class
    from a dict whose keys the checker cannot see). Enum's functional API, pandas accessor
    registration and functools.wraps(assigned=...) likewise need literal names.
    """

    node_types = (ast.Name, ast.Call)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Name):
            if not isinstance(node.ctx, ast.Load):
                continue
            if node.id in L.REFLECTION_BUILTINS:
                yield from self._reflection(cell, node)
            elif node.id == "type":
                yield from self._type(cell, node)
        for call in cell.nodes(ast.Call):
            name = call_name(call.func)
            if name in L.ENUM_FACTORIES and len(call.args) >= 2:
                yield from self._enum(cell, call)
            elif name in L.ACCESSOR_REGISTRARS:
                value = literal_str(call.args[0]) if call.args else None
                if value is None or cell.name_problem(value) or value.startswith("_"):
                    yield cell.violation(
                        self.name, call, f"{name}() needs a literal, public accessor name"
                    )
            elif name == "wraps" and any(k.arg in ("assigned", "updated") for k in call.keywords):
                yield cell.violation(
                    self.name, call, "functools.wraps(assigned=/updated=) copies attributes by name"
                )

    def _reflection(self, cell: Cell, node: ast.Name) -> Iterator[SecurityViolation]:
        name = node.id
        if not cell.is_callee(node):
            yield cell.violation(
                self.name, node, f"'{name}' may only be called directly with a literal name"
            )
            return
        call = cell.call_of[id(node)]
        low, high = L.REFLECTION_BUILTINS[name]
        if (
            call.keywords
            or any(isinstance(a, ast.Starred) for a in call.args)
            or not low <= len(call.args) <= high
        ):
            yield cell.violation(self.name, call, f"unusual call of '{name}' is not allowed")
            return
        attr = literal_str(call.args[1])
        if attr is None:
            yield cell.violation(
                self.name, call, f"{name}() needs a string literal as the attribute name"
            )
            return
        problem = cell.name_problem(attr)
        if problem:
            yield cell.violation(self.name, call, f"{name}(..., {attr!r}): {problem}")

    def _type(self, cell: Cell, node: ast.Name) -> Iterator[SecurityViolation]:
        call = cell.call_of.get(id(node))
        if call is not None:
            if len(call.args) != 1 or call.keywords or isinstance(call.args[0], ast.Starred):
                yield cell.violation(
                    self.name, call, "type() with more than one argument builds a class"
                )
            return
        parent = cell.parent(node)
        holder = cell.parent(parent) if isinstance(parent, ast.Tuple) else parent
        if isinstance(holder, ast.Call) and call_name(holder.func) in _TYPE_OK_CALLERS:
            return  # isinstance(x, type)
        if isinstance(parent, ast.arg) or (
            isinstance(parent, ast.AnnAssign) and parent.annotation is node
        ):
            return  # an annotation
        if isinstance(parent, ast.BinOp) and isinstance(parent.op, ast.BitOr):
            return  # `type | None`
        if isinstance(parent, ast.Subscript) and parent.value is node:
            return
        if isinstance(parent, ast.FunctionDef | ast.AsyncFunctionDef) and parent.returns is node:
            return
        yield cell.violation(self.name, node, "'type' may only be called with one argument")

    def _enum(self, cell: Cell, node: ast.Call) -> Iterator[SecurityViolation]:
        names = node.args[1]
        ok = literal_str(names) is not None
        if isinstance(names, ast.List | ast.Tuple):
            items = []
            for elt in names.elts:
                if isinstance(elt, ast.Tuple) and elt.elts:
                    elt = elt.elts[0]
                items.append(literal_str(elt))
            ok = all(i is not None and not i.startswith("_") for i in items)
        if not ok:
            yield cell.violation(
                self.name, node, "Enum's functional API needs literal, public member names"
            )


# -- format strings ---------------------------------------------------------------------------
def template_walks(template: str) -> str | None:
    """The first replacement field that walks attributes (`{0.__class__}`), if any."""
    formatter = string.Formatter()
    pending = [template]
    seen = 0
    while pending and seen < 50:
        seen += 1
        for _text, field, spec, _conv in formatter.parse(pending.pop()):
            if field is not None and "." in field:
                return field
            if spec and "{" in spec:
                pending.append(spec)
    return None


class FormatRule(SecurityRule):
    """`str.format`/`format_map` templates: literal only, and no attribute-walking fields.

    `"{0.__init__.__globals__}".format(f)` reads attributes by name from inside a string,
    so templates must be string literals whose fields do not contain `.`. Styler.format
    (`df.style.format("{:.1%}")`) is a table formatter, not str.format, and is allowed with
    literal templates.
    """

    node_types = (ast.Attribute,)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Attribute):
            if node.attr not in ("format", "format_map", "vformat"):
                continue
            if node.attr == "vformat":
                yield cell.violation(self.name, node, "Formatter.vformat is not allowed")
                continue
            template = literal_str(node.value)
            call = cell.call_of.get(id(node))
            if (
                template is None
                and isinstance(node.value, ast.Name)
                and node.value.id == "str"
                and isinstance(call, ast.Call)
                and call.args
            ):
                template = literal_str(call.args[0])
            if template is not None:
                field = self._bad_template(template)
                if field:
                    yield cell.violation(
                        self.name, node, f"format field {{{field}}} walks attributes"
                    )
                continue
            _base, attrs = chain(node.value)
            if "style" in attrs and isinstance(call, ast.Call):
                for arg in [*call.args, *(k.value for k in call.keywords)]:
                    for const in ast.walk(arg):
                        text = literal_str(const)
                        if text and self._bad_template(text):
                            yield cell.violation(self.name, const, "format field walks attributes")
                continue
            yield cell.violation(
                self.name,
                node,
                f".{node.attr}() on a template that is not a string literal is not allowed; "
                "use an f-string",
            )

    @staticmethod
    def _bad_template(template: str) -> str | None:
        try:
            return template_walks(template)
        except ValueError:
            return "unparseable template"


# -- pandas query/eval --------------------------------------------------------------------------
_BACKTICK = re.compile(r"`[^`]*`")
_AT_REF = re.compile(r"@\s*([A-Za-z_]\w*)?(\s*[.(\[])?")


class QueryRule(SecurityRule):
    """Strings passed to `DataFrame.query`/`eval` and `pd.eval`, which pandas evaluates.

    The expression must be a string literal (not an f-string or variable); `@name` may
    only name a local variable (no `@x.attr`, `@f()`); the rest is checked with the same
    rules as the cell, so underscores, dunders and module walks are refused inside it too.
    The scope keywords (`local_dict`, `resolvers`, ...) are refused, and `engine`/`parser`
    may only name pandas' own restricted evaluators.
    """

    node_types = (ast.Attribute,)

    def name_problem(self, name: str) -> str | None:
        if name in L.QUERY_METHODS:
            return f"'{name}' evaluates strings; call .{name}(\"...\") directly"
        return None

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Attribute):
            if node.attr not in L.QUERY_METHODS:
                continue
            if not cell.is_callee(node):
                yield cell.violation(self.name, node, f"'.{node.attr}' may only be called directly")
                continue
            yield from self._check_call(cell, node, cell.call_of[id(node)])

    def _check_call(
        self, cell: Cell, node: ast.Attribute, call: ast.Call
    ) -> Iterator[SecurityViolation]:
        method = node.attr
        if any(isinstance(a, ast.Starred) for a in call.args) or any(
            k.arg is None for k in call.keywords
        ):
            yield cell.violation(self.name, call, f".{method}() with *args/**kwargs")
            return
        for k in call.keywords:
            if k.arg in L.QUERY_FORBIDDEN_KEYWORDS:
                yield cell.violation(self.name, k, f".{method}({k.arg}=...) is not allowed")
            elif k.arg in L.QUERY_ENGINE_KEYWORDS and not self._literal_in(
                k.value, L.QUERY_ENGINE_KEYWORDS[k.arg]
            ):
                allowed = " or ".join(repr(v) for v in L.QUERY_ENGINE_KEYWORDS[k.arg] if v)
                yield cell.violation(
                    self.name,
                    k,
                    f".{method}({k.arg}=...) may only be {allowed}; for string methods use "
                    "boolean indexing (df[df.name.str.startswith('a')])",
                )
        expr_node = call.args[0] if call.args else None
        for k in call.keywords:
            if k.arg == "expr":
                expr_node = k.value
        if expr_node is None:
            return
        text = literal_str(expr_node)
        if text is None:
            yield cell.violation(
                self.name,
                expr_node,
                f".{method}() needs a string literal; put values in variables and "
                "refer to them as @name",
            )
            return
        yield from self._check_text(cell, expr_node, method, text)

    @staticmethod
    def _literal_in(node: ast.AST, allowed: frozenset[str | None]) -> bool:
        return isinstance(node, ast.Constant) and node.value in allowed

    def _check_text(
        self, cell: Cell, at: ast.AST, method: str, text: str
    ) -> Iterator[SecurityViolation]:
        counter = 0

        def placeholder(_match: re.Match[str]) -> str:
            nonlocal counter
            counter += 1
            return f"qcol{counter}"

        text = _BACKTICK.sub(placeholder, text)
        for match in _AT_REF.finditer(text):
            if match.group(1) is None or match.group(2):
                yield cell.violation(
                    self.name,
                    at,
                    f"in .{method}() strings '@' may only name a variable (no attribute, "
                    "call or index after it)",
                )
                return
        cleaned = text.replace("@", "")
        try:
            tree = ast.parse(cleaned, mode="exec")
        except (SyntaxError, ValueError, RecursionError, MemoryError):
            yield cell.violation(
                self.name, at, f"cannot check this .{method}() string; simplify the expression"
            )
            return
        if self._plain(tree):
            return  # comparisons and arithmetic on column names: nothing to walk
        for violation in cell.subcheck(cleaned, at):
            violation.message = f"in .{method}() string: {violation.message}"
            yield violation

    _PLAIN = (
        ast.Module, ast.Expr, ast.Assign, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp,
        ast.Name, ast.Constant, ast.List, ast.Tuple, ast.Load, ast.Store, ast.operator,
        ast.boolop, ast.unaryop, ast.cmpop,
    )  # fmt: skip

    @classmethod
    def _plain(cls, tree: ast.AST) -> bool:
        """Only operators on ordinary column/variable names: nothing a rule could flag.

        A bare name in `pd.eval` (or `@name` in a query) evaluates to whatever that name
        is bound to, so builtins (`getattr`, `type`) and known function names go through
        the full check.
        """
        for node in ast.walk(tree):
            if not isinstance(node, cls._PLAIN):
                return False
            if isinstance(node, ast.Name) and (
                node.id.startswith("_")
                or hasattr(builtins, node.id)
                or node.id in L.IO_FUNCTIONS
                or node.id in L.CAPABILITY_ATTRIBUTES
                or node.id in L.MODULE_ATTRIBUTES
                or node.id in L.RUNTIME_ATTRIBUTES
            ):
                return False
        return True
