"""Rules the named policies add to the four upstream ones.

Each closes one class of escape that a name deny-list misses; the docstrings say which.
"""

from __future__ import annotations

import ast
import builtins
import re
import string
from collections.abc import Iterable, Iterator

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell, call_name, chain, literal_str
from cave_tui.security.resolve import ModuleResolver
from cave_tui.security.rules import SecurityRule, is_dunder
from cave_tui.security.violations import SecurityViolation


# -- IPython -------------------------------------------------------------------------------
class MagicRule(SecurityRule):
    """Magics, shell escapes, help requests, autocall escapes and one-line automagic.

    Works on what `source.prepare` found by running IPython's own transformer, so every
    spelling IPython accepts (`!ls`, `x = !ls`, `%%bash`, `ls?`, `/f x`, `cat /etc/passwd`)
    is seen as the rewrite it becomes.
    """

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        prepared = cell.prepared
        for lineno, what in prepared.rewrites:
            yield SecurityViolation(
                message=f"{what} is not allowed (IPython magics and shell commands are off)",
                rule=self.name,
                lineno=lineno,
                col=1,
            )
        if prepared.automagic:
            yield SecurityViolation(
                message=prepared.automagic + "; write plain Python (e.g. print(name))",
                rule=self.name,
                lineno=1 + prepared.line_offset,
                col=1,
            )


# -- names -------------------------------------------------------------------------------
class NameRule(SecurityRule):
    """Dunder names (`__builtins__`, `__import__`, `__loader__`) and IPython's history names.

    `strict=True` refuses every name starting with `__` (bar `__name__`/`__doc__`, and
    `__slots__` in a class body) and IPython's `_ih`/`_oh`/`_i3`-style variables.
    """

    node_types = (ast.Name,)

    def __init__(self, *, strict: bool = False) -> None:
        self.strict = strict

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Name):
            name = node.id
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
        for node in cell.nodes(ast.Call):
            name = call_name(node.func)
            if name in L.ENUM_FACTORIES and len(node.args) >= 2:
                yield from self._enum(cell, node)
            elif name in L.ACCESSOR_REGISTRARS:
                value = literal_str(node.args[0]) if node.args else None
                if value is None or cell.name_problem(value) or value.startswith("_"):
                    yield cell.violation(
                        self.name, node, f"{name}() needs a literal, public accessor name"
                    )
            elif name == "wraps" and any(k.arg in ("assigned", "updated") for k in node.keywords):
                yield cell.violation(
                    self.name, node, "functools.wraps(assigned=/updated=) copies attributes by name"
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
def _template_walks(template: str) -> str | None:
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
            return _template_walks(template)
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
        attributes = cell.by_type.get(ast.Attribute, [])
        getattrs = [c for c in cell.by_type.get(ast.Call, []) if self._is_getattr(c)]
        roots = set(cell.import_aliases) | set(cell.simple_aliases)
        bases = {
            a.value.id  # type: ignore[attr-defined]
            for a in attributes
            if a.value.__class__ is ast.Name  # type: ignore[attr-defined]
        }
        bases.update(c.args[0].id for c in getattrs if c.args[0].__class__ is ast.Name)  # type: ignore[attr-defined]
        candidates = bases & self.aliases.keys()
        if candidates:
            roots.update(n for n in candidates if n not in cell.assigned_names)
        inner = {id(a.value) for a in attributes}  # type: ignore[attr-defined]
        inner.update(id(c.args[0]) for c in getattrs)  # type: ignore[attr-defined]
        for node in [*attributes, *getattrs]:
            if id(node) in inner:
                continue  # not the top of its chain
            base = node
            while True:
                if isinstance(base, ast.Attribute):
                    base = base.value
                elif base.__class__ is ast.Call and self._is_getattr(base):
                    base = base.args[0]  # type: ignore[attr-defined]
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
            if not isinstance(node.ctx, ast.Load) and self._class_of_instance(node.value):  # type: ignore[attr-defined]
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


# -- I/O and deserialization ---------------------------------------------------------------------
_DATA_FIRST = frozenset(
    {"dump", "write_table", "write_csv", "write_feather", "write_tensor", "write_to_dataset",
     "write_metadata"}
)  # fmt: skip


_PLOTTING_CALLS = L.OPTION_SETTERS | L.RC_SETTERS | L.BACKEND_LOADERS | {"rc"}


class IORule(SecurityRule):
    """File and network I/O through data libraries (strict: in-memory buffers only).

    `pd.read_csv`, `df.to_parquet`, `np.save`, `fig.savefig`, `pq.write_table`... must
    be given an `io.BytesIO`/`io.StringIO` made in the same cell; memory maps, HDF stores,
    SQL and the clipboard are refused outright, as is any call of `.open(...)`, `.system(...)`
    and any file name or URL passed to a call. It cannot see I/O a library does from a path
    string it builds itself.
    """

    node_types = (ast.Call, ast.Attribute)

    def name_problem(self, name: str) -> str | None:
        if name in L.CALLED_CAPABILITIES or name in L.ALWAYS_IO_FUNCTIONS:
            return f"'{name}' reaches files, programs or the network"
        return None

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Name):
            if (
                node.id in L.IO_FUNCTIONS
                and node.id not in L.GENERIC_IO_FUNCTIONS
                and isinstance(node.ctx, ast.Load)
                and not cell.is_callee(node)
            ):
                yield cell.violation(self.name, node, f"'{node.id}' may only be called directly")
        for node in cell.nodes(ast.Subscript):
            if (
                not isinstance(node.ctx, ast.Load)
                and self._is_rc(node.value)
                and literal_str(node.slice) is None
            ):
                yield cell.violation(self.name, node, "rcParams keys must be string literals")
        for node in cell.nodes(ast.Attribute):
            if (
                node.attr in L.IO_FUNCTIONS
                and node.attr not in L.GENERIC_IO_FUNCTIONS
                and not cell.is_callee(node)
            ):
                yield cell.violation(self.name, node, f"'.{node.attr}' may only be called directly")
            if node.attr == "backend" and not isinstance(node.ctx, ast.Load):
                yield cell.violation(self.name, node, "setting a plotting backend is not allowed")
            if node.attr in L.CALLED_CAPABILITIES and cell.is_callee(node):
                what = "opens files" if node.attr == "open" else "runs programs or signals"
                yield cell.violation(self.name, node, f"calling '.{node.attr}()' ({what})")
        for node in cell.nodes(ast.Call):
            yield from self._check_call(cell, node)
        yield from self._file_names(cell)

    def _file_names(self, cell: Cell) -> Iterator[SecurityViolation]:
        """File names (`"out.csv"`) passed straight to any call."""
        for node in cell.nodes(ast.Constant):
            text = node.value
            if (
                text.__class__ is str
                and "." in text
                and L.FILE_NAME.match(text)
                and not L.PATH_PREFIX.match(text)
            ):
                parent = cell.parent(node)
                if isinstance(parent, ast.keyword):
                    parent = cell.parent(parent)
                if isinstance(parent, ast.Call) and parent.func is not node:
                    yield cell.violation(
                        self.name, node, f"file names and URLs ({text[:40]!r}) are not allowed"
                    )

    def _check_call(self, cell: Cell, node: ast.Call) -> Iterator[SecurityViolation]:
        name = call_name(node.func)
        if name == "getattr" and len(node.args) >= 2:
            attr = literal_str(node.args[1])
            if attr in L.IO_FUNCTIONS or attr in L.CALLED_CAPABILITIES:
                yield cell.violation(self.name, node, f"getattr(..., {attr!r}) reaches I/O")
        if node.keywords or name in _PLOTTING_CALLS:
            yield from self._plotting(cell, node, name)
        if name is None or name not in L.IO_FUNCTIONS:
            return
        if name in L.ALWAYS_IO_FUNCTIONS:
            yield cell.violation(self.name, node, f"'{name}()' reads or writes files")
            return
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            yield cell.violation(self.name, node, f"'{name}()' with *args/**kwargs")
            return
        slot = 1 if name in _DATA_FIRST and len(node.args) >= 2 else 0
        target = node.args[slot] if len(node.args) > slot else None
        for k in node.keywords:
            if k.arg in L.IO_PATH_KEYWORDS:
                target = k.value
        if isinstance(target, ast.Constant) and target.value is None:
            target = None  # df.to_string(buf=None) returns a string
        if target is None:
            if name.startswith("to_"):
                return  # df.to_csv() with no target returns a string
            yield cell.violation(self.name, node, f"'{name}()' needs an in-memory buffer")
            return
        if not cell.is_buffer_expr(target):
            yield cell.violation(
                self.name,
                target,
                f"'{name}()' may only use an io.BytesIO/io.StringIO buffer made in this cell "
                "(no file or network access)",
            )

    @staticmethod
    def _literal_settings(node: ast.AST) -> bool:
        """A style name, a list of them, or a dict with literal keys."""
        if literal_str(node) is not None:
            return True
        if isinstance(node, ast.List | ast.Tuple):
            return all(literal_str(e) is not None for e in node.elts)
        if isinstance(node, ast.Dict):
            return all(k is not None and literal_str(k) is not None for k in node.keys)
        return False

    @staticmethod
    def _is_rc(node: ast.AST) -> bool:
        _base, attrs = chain(node)
        if attrs:
            return attrs[-1] in ("rcParams", "rcParamsDefault")
        return isinstance(node, ast.Name) and node.id == "rcParams"

    def _plotting(
        self, cell: Cell, node: ast.Call, name: str | None
    ) -> Iterator[SecurityViolation]:
        """Plotting settings that import modules by name or run LaTeX/ffmpeg."""
        first = node.args[0] if node.args else None
        if name in L.OPTION_SETTERS and (
            any(isinstance(a, ast.Starred) for a in node.args)
            or any(literal_str(a) is None for a in node.args[::2])
        ):
            yield cell.violation(self.name, node, f"{name}() needs literal option names")
        rc_call = name == "rc_context" or (
            name in L.RC_SETTERS
            and isinstance(node.func, ast.Attribute)
            and self._is_rc(node.func.value)
        )
        if rc_call and (
            node.keywords
            or any(
                not isinstance(a, ast.Dict) or any(literal_str(k) is None for k in a.keys)
                for a in node.args
            )
        ):
            yield cell.violation(self.name, node, f"{name}() needs a dict literal of settings")
        if name == "rc" and first is not None and literal_str(first) is None:
            yield cell.violation(self.name, node, "rc() needs a literal group name")
        if name == "rc" and literal_str(first) in L.RISKY_RC_GROUPS:
            yield cell.violation(self.name, node, f"rc({literal_str(first)!r}, ...) is not allowed")
        style = (
            name == "use"
            and isinstance(node.func, ast.Attribute)
            and chain(node.func.value)[1][-1:] == ["style"]
        )
        if style and first is not None and not self._literal_settings(first):
            yield cell.violation(
                self.name, node, "style.use() needs a literal style name or dict of settings"
            )
        if name == "switch_backend" or (name == "use" and not style):
            backend = literal_str(first)
            if first is not None and (backend is None or backend.lower() not in L.SAFE_BACKENDS):
                yield cell.violation(
                    self.name, node, f"{name}() may only select a non-interactive backend (Agg)"
                )
        for k in node.keywords:
            if k.arg == "usetex" and not (isinstance(k.value, ast.Constant) and not k.value.value):
                yield cell.violation(self.name, k, "usetex runs LaTeX on figure text")
            if k.arg == "backend" and literal_str(k.value) != "matplotlib":
                yield cell.violation(self.name, k, "only backend='matplotlib' is allowed")


class DeserializationRule(SecurityRule):
    """Loading pickles, which runs code: `np.load(allow_pickle=True)` and its spellings.

    Also the explicit "skip the safety check" switches of the array libraries, which turn
    ordinary calls into raw memory access (`a.resize(n, refcheck=False)` frees memory that
    views still use; `DictionaryArray.from_arrays(..., safe=False)` skips bounds checks).
    """

    node_types = (ast.Call, ast.Constant)

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Call):
            for k in node.keywords:
                if (
                    k.arg in ("refcheck", "safe")
                    and not (isinstance(k.value, ast.Constant) and k.value.value is True)
                    and (k.arg == "refcheck" or call_name(node.func) == "from_arrays")
                ):
                    yield cell.violation(
                        self.name, k, f"{k.arg}= other than True skips a memory-safety check"
                    )
                if k.arg == "allow_pickle" and not (
                    isinstance(k.value, ast.Constant) and k.value.value is False
                ):
                    yield cell.violation(self.name, k, "allow_pickle is not allowed (runs code)")
            if call_name(node.func) == "load" and (
                len(node.args) >= 3
                or any(k.arg is None for k in node.keywords)
                or any(isinstance(a, ast.Starred) for a in node.args)
            ):
                yield cell.violation(
                    self.name, node, "load() with a positional allow_pickle or **kwargs"
                )
        for node in cell.nodes(ast.Constant):
            if node.value == "allow_pickle":
                yield cell.violation(self.name, node, "'allow_pickle' is not allowed (runs code)")


# -- strings ----------------------------------------------------------------------------------
_DUNDER_INSIDE = re.compile(r"__(?!main__|name__)[A-Za-z]\w*__")
_ANNOTATION_OK = re.compile(r"^[A-Za-z][\w.\[\], |]*$")


class StringRule(SecurityRule):
    """String literals that only make sense as part of an escape.

    Dunder names (`"__class__"`, `"__globals__"`: used with subscripts, dicts and
    setattr-like APIs), paths outside the working directory and URLs, matplotlib/pandas
    settings that import modules or run programs, format fields that walk into private
    attributes, and string annotations that are not plain type names.
    """

    node_types = (ast.Constant,)

    def __init__(self, *, strict: bool = True) -> None:
        self.strict = strict  # False: only dunder names and private format fields

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        docstrings = cell.docstrings
        annotations = self._annotations(cell)
        for node in cell.by_type.get(ast.Constant, ()):
            text = node.value  # type: ignore[attr-defined]
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
        if self.strict:
            if (first in "~/.\\" or "://" in text or text[1:2] == ":") and L.PATH_PREFIX.match(
                text
            ):
                return f"file paths and URLs ({short!r}) are not allowed"
            if L.RISKY_CONFIG_STRING.match(text):
                return f"setting {short!r} makes libraries import modules or run programs"
            if ("<" in text or "file:" in text) and L.XML_EXTERNAL.search(text):
                return "XML entities, XSLT document() and file: URLs read files"
        if "{" in text and "." in text:
            try:
                field = _template_walks(text)
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


def build_name_problem(rules: Iterable[SecurityRule]):  # type: ignore[no-untyped-def]
    """One function answering 'may attribute NAME be read by name?' for all *rules*."""
    rules = [r for r in rules if type(r).name_problem is not SecurityRule.name_problem]

    def name_problem(name: str) -> str | None:
        for rule in rules:
            problem = rule.name_problem(name)
            if problem:
                return problem
        return None

    return name_problem
