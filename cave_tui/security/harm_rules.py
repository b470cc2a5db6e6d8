"""What `standard` refuses when the kernel is not sandboxed: shells and destruction.

Everyday file work passes (`open`, `pathlib`, `os`, `shutil`, writers in the working
folder or a temporary one, reading from anywhere). Refused: running programs, and
deleting, overwriting, moving or re-permissioning what lies outside the working folder
(your home's dotfiles included), as far as `static_paths.PathFinder` can tell where a path
points. A recursive delete must name a path the guard can place inside the working folder
or the temporary folder; a single delete or write to a path computed at run time passes.
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from enum import Enum

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell, call_name, chain, literal_str
from cave_tui.security.io_rules import io_target, is_writer
from cave_tui.security.rules import SecurityRule
from cave_tui.security.static_paths import PATH_CLASSES, PathFinder, Where
from cave_tui.security.violations import SecurityViolation


class Harm(Enum):
    """What an operation does to the path it is given, and where that is refused."""

    WRITE = ("writes", frozenset({Where.DOTFILES, Where.OUTSIDE}))
    DELETE = (
        "deletes or moves",
        frozenset({Where.DOTFILES, Where.HOME, Where.OUTSIDE, Where.WORKDIR, Where.TEMP_ROOT}),
    )
    RECURSIVE = (
        "deletes the folder tree",
        frozenset(
            {
                Where.DOTFILES,
                Where.HOME,
                Where.OUTSIDE,
                Where.WORKDIR,
                Where.TEMP_ROOT,
                Where.UNKNOWN,
            }
        ),
    )
    CHDIR = ("moves the working folder to", frozenset({Where.DOTFILES, Where.HOME, Where.OUTSIDE}))

    @property
    def verb(self) -> str:
        return self.value[0]

    @property
    def refused(self) -> frozenset[Where]:
        return self.value[1]


# Module functions -> (harm, positional slots of the paths it harms, their keyword names).
_FUNCTIONS: dict[str, tuple[Harm, tuple[tuple[int, str], ...]]] = {
    "shutil.rmtree": (Harm.RECURSIVE, ((0, "path"),)),
    "os.removedirs": (Harm.RECURSIVE, ((0, "name"),)),
    "os.remove": (Harm.DELETE, ((0, "path"),)),
    "os.unlink": (Harm.DELETE, ((0, "path"),)),
    "os.rmdir": (Harm.DELETE, ((0, "path"),)),
    "os.rename": (Harm.DELETE, ((0, "src"), (1, "dst"))),
    "os.replace": (Harm.DELETE, ((0, "src"), (1, "dst"))),
    "os.renames": (Harm.DELETE, ((0, "old"), (1, "new"))),
    "shutil.move": (Harm.DELETE, ((0, "src"), (1, "dst"))),
    "os.truncate": (Harm.WRITE, ((0, "path"),)),
    "os.chmod": (Harm.WRITE, ((0, "path"),)),
    "os.lchmod": (Harm.WRITE, ((0, "path"),)),
    "os.chown": (Harm.WRITE, ((0, "path"),)),
    "os.lchown": (Harm.WRITE, ((0, "path"),)),
    # a link to a file outside lets a later write in the folder reach it: both ends count
    "os.symlink": (Harm.WRITE, ((0, "src"), (1, "dst"))),
    "os.link": (Harm.WRITE, ((0, "src"), (1, "dst"))),
    "os.mkfifo": (Harm.WRITE, ((0, "path"),)),
    "os.utime": (Harm.WRITE, ((0, "path"),)),
    "shutil.copy": (Harm.WRITE, ((1, "dst"),)),
    "shutil.copy2": (Harm.WRITE, ((1, "dst"),)),
    "shutil.copyfile": (Harm.WRITE, ((1, "dst"),)),
    "shutil.copytree": (Harm.WRITE, ((1, "dst"),)),
    "shutil.copymode": (Harm.WRITE, ((1, "dst"),)),
    "shutil.copystat": (Harm.WRITE, ((1, "dst"),)),
    "shutil.chown": (Harm.WRITE, ((0, "path"),)),
    "shutil.unpack_archive": (Harm.WRITE, ((1, "extract_dir"),)),
    "shutil.make_archive": (Harm.WRITE, ((0, "base_name"),)),
    "os.chdir": (Harm.CHDIR, ((0, "path"),)),
    "contextlib.chdir": (Harm.CHDIR, ((0, "path"),)),
}
_FUNCTIONS.update({f"posix.{k[3:]}": v for k, v in list(_FUNCTIONS.items()) if k.startswith("os.")})
# Methods of path objects: the receiver is the path harmed (`Path.unlink(p)`: the argument).
_PATH_METHODS = {
    "unlink": Harm.DELETE, "rmdir": Harm.DELETE, "write_text": Harm.WRITE,
    "write_bytes": Harm.WRITE, "touch": Harm.WRITE, "chmod": Harm.WRITE, "lchmod": Harm.WRITE,
    "symlink_to": Harm.WRITE, "hardlink_to": Harm.WRITE, "rmtree": Harm.RECURSIVE,
}  # fmt: skip
# Methods too common elsewhere (`str.replace`, `df.rename`): judged on path objects only.
_PATH_ONLY_METHODS = {"rename": Harm.DELETE, "replace": Harm.DELETE, "open": Harm.WRITE}
# Functions that open a path with a mode (second argument or `mode=`).
_OPENERS = frozenset(
    {"open", "io.open", "codecs.open", "io.FileIO", "gzip.open", "bz2.open", "lzma.open",
     "tarfile.open", "zipfile.ZipFile", "gzip.GzipFile", "bz2.BZ2File", "lzma.LZMAFile"}
)  # fmt: skip
_WRITE_FLAGS = frozenset({"O_WRONLY", "O_RDWR", "O_CREAT", "O_TRUNC", "O_APPEND"})
_RECURSIVE = frozenset(k for k, (harm, _) in _FUNCTIONS.items() if harm is Harm.RECURSIVE)


def _arg(call: ast.Call, slot: int, keyword: str) -> ast.AST | None:
    if len(call.args) > slot and not any(isinstance(a, ast.Starred) for a in call.args[: slot + 1]):
        return call.args[slot]
    for k in call.keywords:
        if k.arg == keyword:
            return k.value
    return None


def _writes(mode: ast.AST | None) -> bool:
    """An open() mode that writes: 'w', 'a', 'x', '+', or one not known until run time."""
    if mode is None:
        return False
    text = literal_str(mode)
    return text is None or any(c in text for c in "wax+")


class ShellRule(SecurityRule):
    """Running programs: `os.system`, `os.popen`, `os.exec*`, `os.spawn*`, `fork`, `pty`,
    `asyncio.create_subprocess_*`, `subprocess`-like modules, signals to other processes,
    and the spellings that reach them (aliases, literal getattr, from-imports, a name
    computed at run time on `os`, `sys.modules[...]`)."""

    node_types = (ast.Attribute, ast.Call, ast.Subscript)

    def name_problem(self, name: str) -> str | None:
        if name in L.SHELL_FUNCTIONS:
            return f"'{name}' runs programs; the kernel is not sandboxed"
        return None

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        finder = PathFinder(cell)
        for node in cell.nodes(ast.Attribute):
            qual = finder.qualname(node)
            if node.attr in L.SHELL_FUNCTIONS and self._runs(cell, node, qual):
                yield cell.violation(
                    self.name,
                    node,
                    f"'.{node.attr}' runs programs, which the guard refuses when the kernel "
                    "is not sandboxed",
                )
            elif qual in L.PROCESS_KILLERS:
                yield cell.violation(self.name, node, f"'{qual}' signals other processes")
        for call in cell.nodes(ast.Call):
            func = call.func
            if (
                isinstance(func, ast.Name)
                and func.id in L.SHELL_FUNCTIONS
                and func.id not in cell.assigned_names
            ):  # `from os import system` here or in an earlier cell, or `from os import *`
                yield cell.violation(self.name, call, f"'{func.id}()' runs programs")
            if (
                isinstance(func, ast.Name)
                and func.id in ("getattr", "hasattr")
                and len(call.args) >= 2
                and literal_str(call.args[1]) is None
                and finder.qualname(call.args[0]) in L.HARM_MODULES
            ):
                yield cell.violation(
                    self.name, call, "getattr() on os/shutil/sys needs a literal name"
                )
            if (
                isinstance(func, ast.Name)
                and func.id == "vars"
                and call.args
                and (finder.qualname(call.args[0]) or "").split(".")[0]
                in L.HARM_MODULES | L.PROCESS_MODULES
            ):
                yield cell.violation(
                    self.name, call, "vars() of os/shutil/sys reads names by string"
                )
            if call_name(func) in ("methodcaller", "attrgetter") and any(
                self.name_problem(literal_str(a) or "") for a in call.args
            ):
                yield cell.violation(self.name, call, "names a function that runs programs")
            if call_name(func) == "get" and self._is_modules(finder, func):
                yield from self._module_key(cell, call, call.args[0] if call.args else None)
        for sub in cell.nodes(ast.Subscript):
            if self._is_modules(finder, sub.value):
                yield from self._module_key(cell, sub, sub.slice)

    @staticmethod
    def _runs(cell: Cell, node: ast.Attribute, qual: str | None) -> bool:
        """`x.<shell name>` runs a program: always for the unambiguous names; for `system`,
        `popen`, ... when reached from os-like modules, or called on an unknown object
        (`platform.system()` names the OS; `df.system` is a column)."""
        if node.attr not in L.AMBIGUOUS_SHELL_FUNCTIONS:
            return True
        if qual is not None:
            return bool(set(qual.split(".")[:-1]) & L.PROCESS_MODULES)
        base = chain(node)[0]
        known = isinstance(base, ast.Name) and base.id in L.OS_NAMING_MODULES
        return cell.is_callee(node) and not known

    @staticmethod
    def _is_modules(finder: PathFinder, node: ast.AST) -> bool:
        target = node.value if isinstance(node, ast.Attribute) and node.attr == "get" else node
        return finder.qualname(target) == "sys.modules"

    def _module_key(
        self, cell: Cell, node: ast.AST, key: ast.AST | None
    ) -> Iterator[SecurityViolation]:
        if isinstance(key, ast.Name) and key.id == "__name__":
            return  # the cell's own module
        name = literal_str(key)
        if name is None or name.split(".")[0] in L.SHELL_MODULES | {"os", "posix"}:
            yield cell.violation(
                self.name, node, "sys.modules may only be read with a literal module name"
            )


class DestructionRule(SecurityRule):
    """Deletes, overwrites, moves and permission changes outside the working folder.

    Writes (`open(p, 'w')`, `Path.write_text`, `shutil.copy`, `df.to_csv`, `savefig`,
    `canvas.print_png`, ...) are refused into your home's dotfiles or anywhere outside the
    working, temporary and home folders; single deletes and moves also in your home and of
    the working folder itself; recursive deletes (`shutil.rmtree`, `os.removedirs`) unless
    the path is known to be inside the working or temporary folder. `os.chdir` may not
    leave for your home or outside.
    """

    node_types = (ast.Call, ast.Attribute, ast.Name)

    def __init__(self, cwd: str | None = None, home: str | None = None) -> None:
        self.cwd = cwd
        self.home = home

    def name_problem(self, name: str) -> str | None:
        if name in ("rmtree", "removedirs"):
            return f"'{name}' deletes folder trees; call it directly with a literal path"
        return None

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        finder = PathFinder(cell, self.cwd, self.home)
        for call in cell.nodes(ast.Call):
            mapped = self._mapped(finder, call)
            if mapped is not None and mapped[1] in mapped[0].refused:
                harm, where = mapped
                yield cell.violation(
                    self.name,
                    call,
                    f"{harm.verb} each path of {ast.unparse(call.args[1])[:50]} "
                    f"({where.value}); the kernel is not sandboxed",
                )
            for harm, node in self._harms(finder, call):
                where = finder.where(node)
                if where in harm.refused:
                    shown = ast.unparse(node)
                    shown = shown if len(shown) <= 60 else shown[:57] + "..."
                    yield cell.violation(
                        self.name,
                        node,
                        f"{harm.verb} {shown} ({where.value}); the kernel is not "
                        "sandboxed, so the guard keeps such changes to the working folder",
                    )
        for ref in cell.nodes(ast.Attribute, ast.Name):
            if not cell.is_callee(ref) and finder.qualname(ref) in _RECURSIVE:
                yield cell.violation(
                    self.name, ref, "a recursive delete may only be called directly"
                )

    @staticmethod
    def _mapped(finder: PathFinder, call: ast.Call) -> tuple[Harm, Where] | None:
        """`map(os.remove, paths)`: the harm of the function and where the items lie."""
        if not (isinstance(call.func, ast.Name) and call.func.id == "map" and len(call.args) == 2):
            return None
        qual = finder.qualname(call.args[0]) or ""
        method = qual.rsplit(".", 1)[-1]
        if qual in _FUNCTIONS and _FUNCTIONS[qual][1][0][0] == 0:
            harm = _FUNCTIONS[qual][0]
        elif qual.rsplit(".", 1)[0] in PATH_CLASSES and method in _PATH_METHODS:
            harm = _PATH_METHODS[method]
        else:
            return None
        return harm, finder.listed(call.args[1])

    def _harms(self, finder: PathFinder, call: ast.Call) -> Iterator[tuple[Harm, ast.AST]]:
        func = call.func
        qual = finder.qualname(func)
        if qual in _FUNCTIONS:
            harm, slots = _FUNCTIONS[qual]
            for slot, keyword in slots:
                node = _arg(call, slot, keyword)
                yield harm, node if node is not None else ast.Constant(None)
            return
        if qual in _OPENERS or qual == "os.open":
            mode = _arg(call, 1, "flags" if qual == "os.open" else "mode")
            writes = self._flags_write(mode) if qual == "os.open" else _writes(mode)
            path = _arg(call, 0, "path" if qual == "os.open" else "file")
            path = path or _arg(call, 0, "filename") or _arg(call, 0, "name")
            if writes and path is not None:
                yield Harm.WRITE, path
            return
        name = call_name(func)
        if not isinstance(func, ast.Attribute) or name is None:
            return
        receiver: ast.AST = func.value
        args = call.args
        if finder.qualname(receiver) in PATH_CLASSES and args:
            receiver, args = args[0], args[1:]  # Path.unlink(p)
        if name == "extractall":  # zipfile/tarfile: the folder it writes into
            target = _arg(call, 0, "path")
            if target is not None:
                yield Harm.WRITE, target
        if name in _PATH_METHODS:
            yield _PATH_METHODS[name], receiver
            if name in ("symlink_to", "hardlink_to") and args:
                yield Harm.WRITE, args[0]
        elif name in _PATH_ONLY_METHODS and self._is_path(finder, receiver):
            if name == "open":
                if _writes(args[0] if args else _arg(call, 99, "mode")):
                    yield Harm.WRITE, receiver
            else:
                yield Harm.DELETE, receiver
                if args:
                    yield Harm.DELETE, args[0]
        elif is_writer(name):
            target = io_target(call, name)
            if target is not None:
                yield Harm.WRITE, target

    @staticmethod
    def _flags_write(flags: ast.AST | None) -> bool:
        if flags is None:
            return False
        names = {n.attr for n in ast.walk(flags) if isinstance(n, ast.Attribute)}
        names |= {n.id for n in ast.walk(flags) if isinstance(n, ast.Name)}
        return bool(names & _WRITE_FLAGS) or not names

    @staticmethod
    def _is_path(finder: PathFinder, node: ast.AST, depth: int = 0) -> bool:
        """*node* builds a `pathlib` path (so `.rename`/`.open` are the path's methods)."""
        if depth > 6:
            return False
        if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            # `Path("out") / name`, `folder / "x.csv"`; not `(df.a / df.b).replace(...)`
            return literal_str(node.right) is not None or DestructionRule._is_path(
                finder, node.left, depth + 1
            )
        if isinstance(node, ast.Call):
            qual = finder.qualname(node.func)
            if qual in PATH_CLASSES or (qual or "").startswith("pathlib.Path."):
                return True
            if isinstance(node.func, ast.Attribute) and node.func.attr in (
                "expanduser", "joinpath", "resolve", "absolute", "with_suffix", "with_name",
            ):  # fmt: skip
                return DestructionRule._is_path(finder, node.func.value, depth + 1)
        if isinstance(node, ast.Attribute) and node.attr == "parent":
            return True
        if isinstance(node, ast.Name):
            bound = finder.binding(node)
            if bound is None:
                return False
            expression, listing = bound
            if listing:  # `for p in Path("out").glob("*")`: p is a path
                func = expression.func if isinstance(expression, ast.Call) else None
                return (
                    isinstance(func, ast.Attribute)
                    and func.attr in ("glob", "rglob", "iterdir")
                    and DestructionRule._is_path(finder, func.value, depth + 1)
                )
            return DestructionRule._is_path(finder, expression, depth + 1)
        return False
