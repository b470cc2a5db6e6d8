"""Where a path expression in a cell points, worked out without running it.

`PathFinder(cell).where(node)` follows literals, f-strings, `+`, `Path(...) / x`,
`os.path.join`, `Path.home()`, `expanduser('~')`, `os.environ['HOME']`, `tempfile`
folders and names bound earlier in the same cell (including loop variables over a folder's
listing), and answers with a `Where`. A part it cannot know makes the answer less precise,
never more permissive: `Path('out') / name` is inside the working folder, `name` alone is
`UNKNOWN`. Paths are judged against the folder cells run in (the checker's own `cwd`).
"""

from __future__ import annotations

import ast
import os
import posixpath
import tempfile
from enum import Enum

from cave_tui.security.cell import Cell, chain, literal_str

_TEMP_ROOTS = ("/tmp", "/var/tmp", "/dev/shm")
_SINKS = frozenset({"/dev/null"})
# Module names as notebooks bind them, for cells that imported them in an earlier cell.
CONVENTIONAL_MODULES = {
    "os": "os", "shutil": "shutil", "pathlib": "pathlib", "Path": "pathlib.Path",
    "tempfile": "tempfile", "glob": "glob", "osp": "os.path", "io": "io", "codecs": "codecs",
    "posix": "posix", "contextlib": "contextlib", "sys": "sys", "asyncio": "asyncio",
}  # fmt: skip
# Names that stand for their module's function when the cell calls them unbound
# (`from shutil import rmtree` in an earlier cell); too generic ones (`remove`) are not here.
BARE_FUNCTIONS = {
    "rmtree": "shutil.rmtree", "removedirs": "os.removedirs", "unlink": "os.unlink",
    "rmdir": "os.rmdir", "copyfile": "shutil.copyfile", "copytree": "shutil.copytree",
    "copy2": "shutil.copy2", "symlink": "os.symlink", "chmod": "os.chmod",
    "chown": "os.chown", "expanduser": "os.path.expanduser",
}  # fmt: skip
# Modules other modules re-export (`pandas.io.common.os`): a chain through one is its own.
_REEXPORTED = frozenset({"os", "shutil", "posix", "pathlib"})
PATH_CLASSES = frozenset(
    {"pathlib.Path", "pathlib.PosixPath", "pathlib.PurePath", "pathlib.PurePosixPath"}
)
_SAME_PATH = frozenset(
    {"str", "os.fspath", "os.path.abspath", "os.path.realpath", "os.path.normpath",
     "os.fsencode", "os.fsdecode"}
)  # fmt: skip
_TEMP_CALLS = frozenset(
    {"tempfile.gettempdir", "tempfile.mkdtemp", "tempfile.TemporaryDirectory",
     "tempfile.NamedTemporaryFile", "tempfile.mkstemp", "tempfile.TemporaryFile"}
)  # fmt: skip
_WRAPPERS = frozenset({"sorted", "list", "tuple", "set", "reversed", "enumerate"})
_LISTINGS = frozenset({"glob", "rglob", "iterdir", "listdir", "scandir", "walk", "iglob"})
_SAME_AS_RECEIVER = frozenset({"resolve", "absolute", "with_suffix", "with_stem", "with_name"})
_HOME_VARIABLES = frozenset({"HOME", "USERPROFILE", "XDG_CONFIG_HOME", "XDG_DATA_HOME"})


class Where(Enum):
    """The places a path can be, as far as a static reading can tell."""

    LOCAL = "inside the working folder"
    WORKDIR = "the working folder itself"
    TEMP = "in the temporary folder"
    TEMP_ROOT = "the temporary folder itself"
    DOTFILES = "in your home's dotfiles"
    HOME = "in your home folder"
    OUTSIDE = "outside the working folder"
    UNKNOWN = "computed when the cell runs"


Value = str | Where  # a concrete path text, or only where it lies
_SEVERITY = (
    Where.DOTFILES, Where.OUTSIDE, Where.HOME, Where.TEMP_ROOT, Where.WORKDIR, Where.UNKNOWN,
    Where.TEMP, Where.LOCAL,
)  # fmt: skip


def _within(path: str, root: str) -> bool:
    return path == root or path.startswith(root.rstrip("/") + "/")


class PathFinder:
    """Answers `where(node)` for the path expressions of one cell."""

    def __init__(self, cell: Cell, cwd: str | None = None, home: str | None = None) -> None:
        self.cell = cell
        self.cwd = posixpath.normpath(cwd or os.getcwd())
        self.home = posixpath.normpath(home or os.path.expanduser("~"))
        temps = {*_TEMP_ROOTS, posixpath.normpath(tempfile.gettempdir())}
        self.temps = tuple(sorted(temps))
        self._bindings = self._collect_bindings()

    # -- naming --------------------------------------------------------------------------
    def qualname(self, node: ast.AST, depth: int = 0) -> str | None:
        """`shutil.rmtree`, `rm` (from shutil import rmtree as rm), `f = os.remove`,
        `pd.io.common.os.remove` (os re-exported): the dotted name, when it can be known."""
        base, attrs = chain(node)
        for index in range(len(attrs) - 1, -1, -1):
            if attrs[index] in _REEXPORTED and index < len(attrs) - 1:
                return ".".join(attrs[index:])
        if not isinstance(base, ast.Name) or depth > 5:
            return None
        cell = self.cell
        if (
            not attrs
            and base.id in BARE_FUNCTIONS
            and base.id not in cell.import_aliases
            and base.id not in cell.assigned_names
        ):
            return BARE_FUNCTIONS[base.id]  # imported in an earlier cell
        if base.id in cell.import_aliases:
            root = cell.import_aliases[base.id]
        elif base.id in cell.simple_aliases:
            inner = self.qualname(cell.simple_aliases[base.id], depth + 1)
            if inner is None:
                return None
            root = inner
        elif base.id in CONVENTIONAL_MODULES and base.id not in cell.assigned_names:
            root = CONVENTIONAL_MODULES[base.id]
        elif base.id in ("open", "str") and base.id not in cell.assigned_names:
            root = base.id
        else:
            return None
        return ".".join([root, *attrs])

    # -- evaluation ----------------------------------------------------------------------
    def where(self, node: ast.AST | None) -> Where:
        """Where the path *node* evaluates to lies."""
        if node is None:
            return Where.UNKNOWN
        value = self.value(node)
        return self.classify(value) if isinstance(value, str) else value

    def classify(self, text: str) -> Where:
        """Where a concrete path text lies, relative to the working folder."""
        if "://" in text:
            return Where.UNKNOWN  # a URL: not this host's file system
        if text == "~" or text.startswith("~/"):
            text = self.home + text[1:]
        elif text.startswith("~"):
            return Where.OUTSIDE  # another user's home
        if not text.startswith("/"):
            text = posixpath.join(self.cwd, text)
        path = posixpath.normpath(text)
        if path.startswith("//"):
            path = path[1:]
        if path in _SINKS:
            return Where.TEMP
        if _within(path, self.home) and path != self.home:
            first = path[len(self.home) :].lstrip("/").split("/", 1)[0]
            if first.startswith("."):
                return Where.DOTFILES  # ~/.bashrc, ~/.ssh, ~/.config: settings, keys, hooks
        if self.cwd != "/":  # a kernel working in / has no folder of its own to keep to
            if path == self.cwd:
                return Where.WORKDIR
            if _within(path, self.cwd):
                return Where.LOCAL
        for root in self.temps:
            if _within(path, root):
                return Where.TEMP if path != root else Where.TEMP_ROOT
        if _within(path, self.home):
            return Where.HOME
        return Where.OUTSIDE

    def _inside(self, value: Value) -> Where:
        """Where something inside *value* (a folder) lies, the rest of its path unknown."""
        if isinstance(value, str):
            if not value or value in (".", "./"):
                return Where.UNKNOWN  # the unknown part could be an absolute path
            return self.classify(posixpath.join(value, "_"))
        return Where.UNKNOWN if value is Where.WORKDIR else value

    def _concat(self, prefix: str, rest: Value) -> Value:
        if isinstance(rest, str):
            return prefix + rest
        if not prefix:
            return rest if rest is not Where.WORKDIR else Where.UNKNOWN
        return self.classify(prefix + "_") if prefix not in (".", "./") else Where.UNKNOWN

    def _join(self, parts: list[Value]) -> Value:
        value: Value = parts[0] if parts else "."
        for part in parts[1:]:
            if isinstance(part, str) and (part.startswith("/") or part.startswith("~")):
                value = part
            elif isinstance(value, str) and isinstance(part, str):
                value = posixpath.join(value, part)
            else:
                value = self._inside(value)
        return value

    def value(self, node: ast.AST, depth: int = 0) -> Value:
        """A concrete path text for *node*, or where it lies when that is all one can say."""
        if depth > 12:
            return Where.UNKNOWN
        text = literal_str(node)
        if text is not None:
            return text
        if isinstance(node, ast.Constant) and isinstance(node.value, bytes):
            return node.value.decode("utf-8", "replace")
        if isinstance(node, ast.JoinedStr):
            prefix = ""
            for piece in node.values:
                if isinstance(piece, ast.Constant) and isinstance(piece.value, str):
                    prefix += piece.value
                    continue
                inner: Value = Where.UNKNOWN
                if isinstance(piece, ast.FormattedValue) and piece.format_spec is None:
                    inner = self.value(piece.value, depth + 1)
                if isinstance(inner, str):
                    prefix += inner
                    continue
                return self._concat(prefix, inner)
            return prefix
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
            left = self.value(node.left, depth + 1)
            if isinstance(left, str):
                return self._concat(left, self.value(node.right, depth + 1))
            return left if left is not Where.WORKDIR else Where.UNKNOWN
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            return self._join([self.value(node.left, depth + 1), self.value(node.right, depth + 1)])
        if isinstance(node, ast.Name):
            return self._name(node, depth)
        if isinstance(node, ast.Subscript):
            return self._environ(node.value, node.slice)
        if isinstance(node, ast.Attribute):
            return self._attribute(node, depth)
        if isinstance(node, ast.Call):
            return self._call(node, depth)
        return Where.UNKNOWN

    def _environ(self, mapping: ast.AST, key: ast.AST | None) -> Value:
        if self.qualname(mapping) == "os.environ" and literal_str(key) in _HOME_VARIABLES:
            return self.home
        return Where.UNKNOWN

    def _attribute(self, node: ast.Attribute, depth: int) -> Value:
        if self.qualname(node) in ("os.curdir", "os.path.curdir"):
            return "."
        if node.attr == "parent":
            inner = self.value(node.value, depth + 1)
            if isinstance(inner, str):
                parent = posixpath.dirname(inner.rstrip("/")) if inner.strip("./") else ".."
                return parent or "."
            return Where.OUTSIDE if inner is Where.WORKDIR else inner
        return Where.UNKNOWN

    def _call(self, node: ast.Call, depth: int) -> Value:
        name = self.qualname(node.func)
        args = [self.value(a, depth + 1) for a in node.args if not isinstance(a, ast.Starred)]
        if name in PATH_CLASSES or name == "os.path.join":
            return self._join(args) if args else "."
        if name in _SAME_PATH:
            return args[0] if args else Where.UNKNOWN
        if name in ("pathlib.Path.home", "pathlib.PosixPath.home"):
            return self.home
        if name in ("pathlib.Path.cwd", "os.getcwd", "os.getcwdb"):
            return "."
        if name in _TEMP_CALLS:
            return Where.TEMP
        if name in ("os.path.expanduser", "os.path.expandvars"):
            return self._expand(args[0]) if args else Where.UNKNOWN
        if name in ("os.environ.get", "os.getenv") and node.args:
            return self.home if literal_str(node.args[0]) in _HOME_VARIABLES else Where.UNKNOWN
        if isinstance(node.func, ast.Attribute):
            method = node.func.attr
            receiver = node.func.value
            if method == "expanduser":
                return self._expand(self.value(receiver, depth + 1))
            if method == "joinpath":
                return self._join([self.value(receiver, depth + 1), *args])
            if method in _SAME_AS_RECEIVER:
                inner = self.value(receiver, depth + 1)
                return inner if isinstance(inner, Where) else self.classify(inner)
        return Where.UNKNOWN

    @staticmethod
    def worst(places: list[Where]) -> Where:
        """The place among *places* the rules are strictest about (for a loop over them)."""
        for place in _SEVERITY:
            if place in places:
                return place
        return Where.UNKNOWN

    def _expand(self, value: Value) -> Value:
        if isinstance(value, str) and (value == "~" or value.startswith("~/")):
            return self.home + value[1:]
        return value

    # -- names bound in the cell -----------------------------------------------------------
    def _collect_bindings(self) -> dict[str, list[tuple[tuple[int, int], ast.AST, bool]]]:
        """name -> [(position, expression, is a loop over that expression's listing)]."""
        found: dict[str, list[tuple[tuple[int, int], ast.AST, bool]]] = {}

        def add(target: ast.AST, value: ast.AST, listing: bool) -> None:
            if isinstance(target, ast.Name):
                found.setdefault(target.id, []).append(
                    ((target.lineno, target.col_offset), value, listing)
                )
            elif isinstance(target, ast.Tuple | ast.List):
                for element in target.elts:
                    add(element, value if listing else ast.Constant(None), listing)

        cell = self.cell
        for node in cell.nodes(ast.Assign):
            for target in node.targets:
                add(target, node.value, False)
        for node in cell.nodes(ast.AnnAssign, ast.NamedExpr):
            if node.value is not None:
                add(node.target, node.value, False)
        for item in cell.nodes(ast.withitem):
            if item.optional_vars is not None:
                add(item.optional_vars, item.context_expr, False)
        for loop in cell.nodes(ast.For, ast.AsyncFor, ast.comprehension):
            add(loop.target, loop.iter, True)
        for bindings in found.values():
            bindings.sort(key=lambda b: b[0])
        return found

    def binding(self, node: ast.Name) -> tuple[ast.AST, bool] | None:
        """(expression, is a loop over its listing) last bound to *node*'s name above it."""
        where = (node.lineno, node.col_offset)
        bound = [b for b in self._bindings.get(node.id, ()) if b[0] < where]
        if not bound:
            bound = self._bindings.get(node.id, [])[-1:]  # a loop body before its target
        if not bound:
            return None
        return bound[-1][1], bound[-1][2]

    def _name(self, node: ast.Name, depth: int) -> Value:
        found = self.binding(node)
        if found is None:
            return Where.UNKNOWN
        expression, listing = found
        if not listing:
            return self.value(expression, depth + 1)
        return self.listed(expression, depth)

    def listed(self, expression: ast.AST, depth: int = 0) -> Where:
        """Where the items of *expression* (what a loop runs over) lie."""
        if depth > 12:
            return Where.UNKNOWN
        if isinstance(expression, ast.Name):  # files = glob.glob(...); for f in files
            found = self.binding(expression)
            if found is None:
                return Where.UNKNOWN
            inner, listing = found
            return self.listed(inner, depth + 1) if not listing else Where.UNKNOWN
        if (
            isinstance(expression, ast.Call)
            and isinstance(expression.func, ast.Name)
            and expression.func.id in _WRAPPERS
            and expression.args
        ):
            return self.listed(expression.args[0], depth + 1)
        if isinstance(expression, ast.List | ast.Tuple | ast.Set):
            return self.worst([self.where(e) for e in expression.elts])
        if isinstance(expression, ast.Call):
            method = (
                expression.func.attr
                if isinstance(expression.func, ast.Attribute)
                else getattr(expression.func, "id", "")
            )
            if method in _LISTINGS:
                folder: Value = "."
                if isinstance(expression.func, ast.Attribute) and method in (
                    "glob",
                    "rglob",
                    "iterdir",
                ):
                    qual = self.qualname(expression.func)
                    if qual not in ("glob.glob", "glob.iglob"):
                        folder = self.value(expression.func.value, depth + 1)
                if expression.args and folder == ".":
                    folder = self.value(expression.args[0], depth + 1)
                inside = self._inside(folder)
                if isinstance(folder, str) and folder in ("", ".", "./"):
                    return Where.LOCAL  # the working folder's own entries
                return inside
        return Where.UNKNOWN
