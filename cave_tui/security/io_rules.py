"""File, network and process access through data libraries; deserialization; unsafe switches."""

from __future__ import annotations

import ast
from collections.abc import Iterator

from cave_tui.security import lists as L
from cave_tui.security.cell import Cell, call_name, chain, literal_str
from cave_tui.security.paths import is_local_path, looks_like_path
from cave_tui.security.rules import SecurityRule
from cave_tui.security.violations import SecurityViolation

# -- I/O and deserialization ---------------------------------------------------------------------
_DATA_FIRST = frozenset(
    {"dump", "write_table", "write_csv", "write_feather", "write_tensor", "write_to_dataset",
     "write_metadata"}
)  # fmt: skip


def is_io_function(name: str | None) -> bool:
    """A reader or writer of files by name: the listed ones and every `canvas.print_<fmt>`."""
    return name is not None and (name in L.IO_FUNCTIONS or bool(L.CANVAS_PRINTER.match(name)))


def is_writer(name: str | None) -> bool:
    """A listed writer, `savefig`, or a canvas printer (`print_png`, `print_jpg`, ...)."""
    return is_io_function(name) and name not in L.READ_FUNCTIONS


def io_target(node: ast.Call, name: str) -> ast.AST | None:
    """The path or buffer argument of the I/O call *node* to *name*, if it has one."""
    slot = 1 if name in _DATA_FIRST and len(node.args) >= 2 else 0
    target = node.args[slot] if len(node.args) > slot else None
    for k in node.keywords:
        if k.arg in L.IO_PATH_KEYWORDS:
            target = k.value
    if isinstance(target, ast.Constant) and target.value is None:
        return None  # df.to_string(buf=None) returns a string
    return target


_PLOTTING_CALLS = L.OPTION_SETTERS | L.RC_SETTERS | L.BACKEND_LOADERS | {"rc"}


class IORule(SecurityRule):
    """File and network I/O through data libraries (strict: no writes, reads in the cwd).

    Writers (`df.to_parquet`, `np.save`, `fig.savefig`, `pq.write_table`...) must be given
    an `io.BytesIO`/`io.StringIO` made in the same cell; readers (`pd.read_csv`, `np.load`)
    that buffer or a literal relative path inside the working directory. Memory maps, HDF
    stores, SQL, pickles and the clipboard are refused outright, as is any call of
    `.open(...)`/`.system(...)` and a path, URL or file name passed straight to a call
    whose name looks like file access. A path in a string is otherwise data
    (`s.str.replace("https://", "")`). It cannot see I/O a library does from a path string
    it builds itself.
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
        for sub in cell.nodes(ast.Subscript):
            if (
                not isinstance(sub.ctx, ast.Load)
                and self._is_rc(sub.value)
                and literal_str(sub.slice) is None
            ):
                yield cell.violation(self.name, sub, "rcParams keys must be string literals")
        for attribute in cell.nodes(ast.Attribute):
            if (
                is_io_function(attribute.attr)
                and attribute.attr not in L.GENERIC_IO_FUNCTIONS
                and not cell.is_callee(attribute)
            ):
                yield cell.violation(
                    self.name, attribute, f"'.{attribute.attr}' may only be called directly"
                )
            if attribute.attr == "backend" and not isinstance(attribute.ctx, ast.Load):
                yield cell.violation(
                    self.name, attribute, "setting a plotting backend is not allowed"
                )
            if attribute.attr in L.CALLED_CAPABILITIES and cell.is_callee(attribute):
                what = "opens files" if attribute.attr == "open" else "runs programs or signals"
                yield cell.violation(
                    self.name, attribute, f"calling '.{attribute.attr}()' ({what})"
                )
        for call in cell.nodes(ast.Call):
            yield from self._check_call(cell, call)
        yield from self._file_names(cell)

    def _file_names(self, cell: Cell) -> Iterator[SecurityViolation]:
        """Paths, URLs and file names passed straight to a call that looks like file access.

        A path in a string is data (`s.str.startswith("/api/")`, a URL in a title); it is
        refused only as an argument of a call named like a reader or writer nobody listed
        (`thumbnail("a.png", "b.png")`), or under a path keyword (`fname="/etc/x"`). Known
        readers and writers are `_check_call`'s.
        """
        for call in cell.nodes(ast.Call):
            name = call_name(call.func) or ""
            if name in L.IO_FUNCTIONS or self._io_name(call):
                continue  # judged with its target in _check_call
            by_name = bool(L.FILE_CALL_NAME.search(name)) and name not in cell.defined_functions
            args = [(None, a) for a in call.args] + [(k.arg, k.value) for k in call.keywords]
            for keyword, node in args:
                text = literal_str(node)
                if text is None or not (by_name or keyword in L.IO_PATH_KEYWORDS):
                    continue
                if looks_like_path(text):
                    yield cell.violation(
                        self.name,
                        node,
                        f"passing the path {text[:40]!r} to '{name}()' may open a file; read "
                        "data with pd.read_csv('relative/path.csv') or an io buffer",
                    )

    @staticmethod
    def _io_name(node: ast.Call) -> str | None:
        """The name of the reader or writer *node* calls, if it calls one.

        A `print_<fmt>(...)` method with arguments is a canvas printer, whatever the cell
        defines (a `def print_jpg` of its own would otherwise hide matplotlib's).
        """
        name = call_name(node.func)
        if name is None or name in L.IO_FUNCTIONS:
            return name
        if (
            L.CANVAS_PRINTER.match(name)
            and isinstance(node.func, ast.Attribute)
            and (node.args or node.keywords)
        ):
            return name
        return None

    def _check_call(self, cell: Cell, node: ast.Call) -> Iterator[SecurityViolation]:
        name = call_name(node.func)
        for k in node.keywords:
            if k.arg == "mmap_mode" and not (
                isinstance(k.value, ast.Constant) and k.value.value in L.READ_ONLY_MMAP_MODES
            ):
                yield cell.violation(
                    self.name,
                    k,
                    "mmap_mode other than 'r' or 'c' writes to the file; use mmap_mode='r'",
                )
        if name == "getattr" and len(node.args) >= 2:
            attr = literal_str(node.args[1])
            if is_io_function(attr) or attr in L.CALLED_CAPABILITIES:
                yield cell.violation(self.name, node, f"getattr(..., {attr!r}) reaches I/O")
        if node.keywords or name in _PLOTTING_CALLS:
            yield from self._plotting(cell, node, name)
        name = self._io_name(node)
        if name is None:
            return
        if name in L.ALWAYS_IO_FUNCTIONS:
            yield cell.violation(self.name, node, f"'{name}()' reads or writes files")
            return
        if any(isinstance(a, ast.Starred) for a in node.args) or any(
            k.arg is None for k in node.keywords
        ):
            yield cell.violation(self.name, node, f"'{name}()' with *args/**kwargs")
            return
        if (
            name == "write_table"
            and len(node.args) == 1
            and isinstance(node.func, ast.Attribute)
            and not any(k.arg in L.IO_PATH_KEYWORDS for k in node.keywords)
        ):
            # `writer.write_table(t)`: a writer object's method; its sink was checked where
            # the writer was made (pq.write_table(t) without a target is an error anyway).
            return
        target = io_target(node, name)
        if target is None:
            if name.startswith("to_"):
                return  # df.to_csv() with no target returns a string
            yield cell.violation(self.name, node, f"'{name}()' needs an in-memory buffer")
            return
        if cell.is_buffer_expr(target):
            return
        if name not in L.READ_FUNCTIONS:
            yield cell.violation(
                self.name,
                target,
                f"'{name}()' writes files: write to an io.BytesIO/io.StringIO buffer made in "
                "this cell instead",
            )
            return
        path = literal_str(target)
        if path is not None and is_local_path(path):
            return  # a literal relative path inside the working directory
        where = "outside the working directory" if path is not None else "from a computed path"
        yield cell.violation(
            self.name,
            target,
            f"'{name}()' may not read {where}: give a literal relative path "
            "('data/file.csv') or an io.BytesIO/io.StringIO buffer made in this cell",
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

    def __init__(self, *, pickles: bool = True) -> None:
        # False (standard): pickles of your own data pass; only a pickle written into the
        # cell itself (`pickle.loads(b"cos\nsystem...")`) and the memory switches are refused.
        self.pickles = pickles

    def check_cell(self, cell: Cell) -> Iterator[SecurityViolation]:
        yield from self._memory_switches(cell)
        if self.pickles:
            yield from self._pickles(cell)
            return
        for node in cell.nodes(ast.Call):
            if (
                call_name(node.func) in ("loads", "load")
                and node.args
                and isinstance(node.args[0], ast.Constant)
                and isinstance(node.args[0].value, bytes)
            ):
                yield cell.violation(
                    self.name, node, "a pickle written into the cell runs code unchecked"
                )

    def _memory_switches(self, cell: Cell) -> Iterator[SecurityViolation]:
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

    def _pickles(self, cell: Cell) -> Iterator[SecurityViolation]:
        for node in cell.nodes(ast.Call):
            for k in node.keywords:
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
        for const in cell.nodes(ast.Constant):
            if const.value == "allow_pickle":
                yield cell.violation(self.name, const, "'allow_pickle' is not allowed (runs code)")
