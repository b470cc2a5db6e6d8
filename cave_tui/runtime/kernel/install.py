"""What the host installs in a kernel: the command that starts it and the runtime's
kernel-side code, shipped so the kernel needs nothing of cave installed: as source, or, to a
kernel that runs this very interpreter (one cave launched), as the bytecode the host compiled
when it checked that source (the kernel then compiles nothing: a tenth of a second a boot)."""

from __future__ import annotations

import base64
import dis
import hashlib
import importlib.util
import marshal
import os
import re
import sys
import tempfile
import types
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from cave_tui.runtime.shipped import SHIPPED_DIR

# The kernel's module name for each shipped file (cave_tui/runtime/shipped/), in load order:
# the kernel receives their source and imports nothing of cave.
KERNEL_MODULES = {
    "_cave_lazy": "lazy",
    "_cave_summary": "summary",
    "_cave_links": "links",
    "_cave_tracebacks": "tracebacks",
    "_cave_transport": "transport",
    "_cave_mutation": "mutation",
    "_cave_display": "display_options",
    "_cave_persist": "persist",
    "_cave_detail": "detail",
    "_cave_frame_window": "frame_window",
    "_cave_results": "results",
    "_cave_figure_render": "figure_render",
    "_cave_kernel": "bootstrap",
}
_SHIPPED_PACKAGE = "cave_tui.runtime.shipped"
_SHIPPED_IMPORT = re.compile(
    r"^(\s*)from " + re.escape(_SHIPPED_PACKAGE) + r"\.(\w+) import", re.MULTILINE
)


class ShippedImportError(ImportError):
    """A shipped module imports a part of cave that the kernel does not receive."""


def kernel_source(stem: str, text: str | None = None) -> str:
    """The source of shipped module *stem* (or *text*, given as its source) as the kernel runs
    it: its imports of other shipped modules name their kernel modules (`from _cave_summary
    import ...`); any other import of `cave_tui` raises `ShippedImportError`."""
    return _checked(stem, text)[0]


def _checked(stem: str, text: str | None = None) -> tuple[str, types.CodeType]:
    """`kernel_source`, and its code as the kernel names it (file `<_cave_NAME>`)."""
    by_stem = {file: name for name, file in KERNEL_MODULES.items()}

    def kernel_import(match: re.Match[str]) -> str:
        target = match.group(2)
        if target not in by_stem:
            raise ShippedImportError(f"{stem}.py imports {_SHIPPED_PACKAGE}.{target}, not shipped")
        return f"{match.group(1)}from {by_stem[target]} import"

    if text is None:
        text = (SHIPPED_DIR / f"{stem}.py").read_text()
    text = _SHIPPED_IMPORT.sub(kernel_import, text)
    code = compile(text, f"<{by_stem.get(stem, stem)}>", "exec", dont_inherit=True)
    # An import's module name is one of its block's `co_names`: the bytecode is read only
    # where a block names cave (the walk costs several times the compile, and each kernel
    # boot waits for it).
    if any(_cave_name(name) for block in _code_objects(code) for name in block.co_names):
        for name in absolute_imports(code):
            if _cave_name(name):
                raise ShippedImportError(f"{stem}.py imports {name}: the kernel has no cave_tui")
    return text, code


def _cave_name(name: str) -> bool:
    return name == "cave_tui" or name.startswith("cave_tui.")


def absolute_imports(code: types.CodeType) -> Iterator[str]:
    """The modules *code* (and the functions and classes in it) imports by absolute name,
    read from its bytecode: `IMPORT_NAME` after its level's `LOAD_CONST`. Not from an AST:
    CPython 3.11 builds `ast` objects unsafely on two threads at once ("AST constructor
    recursion depth mismatch", gh-106905), and a kernel boots on the runtime's I/O thread
    while a front end imports its SDK (whose imports parse sources) on another."""
    for block in _code_objects(code):
        before: list[dis.Instruction] = []
        for instruction in dis.get_instructions(block):
            if instruction.opname == "IMPORT_NAME" and len(before) >= 2:
                level = before[-2]
                if level.opname == "LOAD_CONST" and level.argval == 0 and instruction.argval:
                    yield str(instruction.argval)
            before = [*before[-1:], instruction]


def _code_objects(code: types.CodeType) -> Iterator[types.CodeType]:
    yield code
    for const in code.co_consts:
        if isinstance(const, types.CodeType):
            yield from _code_objects(const)


_BOOT = """
def _cave_boot(sources, config, compiled=False):
    import sys, types
    if compiled:
        import binascii, marshal, zlib
    current = sys.modules.get("_cave_kernel")
    if current is not None and getattr(current, "agent", None) is not None:
        current.agent.config.update(config)
        return
    for name, src in sources.items():
        module = types.ModuleType(name)
        module.__file__ = "<" + name + ">"
        sys.modules[name] = module
        if compiled:
            code = marshal.loads(zlib.decompress(binascii.a2b_base64(src)))
        else:
            code = compile(src, module.__file__, "exec")
        exec(code, module.__dict__)
    for entry in config.get("extra_paths", []):
        if entry not in sys.path:
            sys.path.append(entry)
    sys.modules["_cave_kernel"].install(get_ipython(), config)
"""


# ipykernel_launcher, minus the debugger: importing debugpy is a sixth of a kernel's start.
KERNEL_MAIN = """\
import sys
sys.modules['debugpy'] = None
if sys.path and sys.path[0] == '':
    del sys.path[0]
from ipykernel import kernelapp
kernelapp.launch_new_instance()
"""

_SOURCES: dict[str, str] | None = None
_COMPILED: dict[str, str] | None = None


def bootstrap_sources() -> dict[str, str]:
    """The kernel's module name -> source of every shipped module (read once; checked and
    compiled once per version of their text, kept in the package's __pycache__)."""
    global _SOURCES, _COMPILED
    if _SOURCES is None:
        raw = {
            name: (SHIPPED_DIR / f"{stem}.py").read_text() for name, stem in KERNEL_MODULES.items()
        }
        cache = _cache_path(raw)
        kept = _read_cache(cache)
        if kept is None:
            checked = {name: _checked(stem, raw[name]) for name, stem in KERNEL_MODULES.items()}
            compiled = {
                name: base64.b64encode(zlib.compress(marshal.dumps(code), 9)).decode("ascii")
                for name, (_, code) in checked.items()
            }
            kept = ({name: text for name, (text, _) in checked.items()}, compiled)
            _write_cache(cache, kept)
        _SOURCES, _COMPILED = kept
    return _SOURCES


def _cache_dir() -> Path:
    return SHIPPED_DIR / "__pycache__"


def _cache_path(raw: dict[str, str]) -> Path:
    """Where the checked and compiled modules of these texts are kept for this interpreter
    (its bytecode's magic number is in the key, as in a .pyc)."""
    digest = hashlib.sha256(importlib.util.MAGIC_NUMBER)
    for name, text in raw.items():
        digest.update(f"\0{name}\0{text}".encode())
    tag = sys.implementation.cache_tag
    return _cache_dir() / f"kernel-boot.{tag}.{digest.hexdigest()[:32]}.marshal"


def _read_cache(path: Path) -> tuple[dict[str, str], dict[str, str]] | None:
    """The kept (sources, compiled), or None when missing or not what it should be."""
    try:
        kept = marshal.loads(path.read_bytes())
    except (OSError, EOFError, ValueError, TypeError):
        return None
    if not (isinstance(kept, tuple) and len(kept) == 2):
        return None
    for part in kept:
        if not isinstance(part, dict) or list(part) != list(KERNEL_MODULES):
            return None
        if not all(isinstance(value, str) for value in part.values()):
            return None
    return kept[0], kept[1]


def _write_cache(path: Path, kept: tuple[dict[str, str], dict[str, str]]) -> None:
    """Keep *kept* at *path* (written aside, renamed into place; the older versions
    removed); a folder cave cannot write in keeps nothing."""
    try:
        path.parent.mkdir(exist_ok=True)
        fd, aside = tempfile.mkstemp(dir=path.parent, prefix=".kernel-boot.", suffix=".tmp")
        with os.fdopen(fd, "wb") as handle:
            handle.write(marshal.dumps(kept))
        os.replace(aside, path)
        for old in path.parent.glob(f"kernel-boot.{sys.implementation.cache_tag}.*.marshal"):
            if old != path:
                old.unlink(missing_ok=True)
    except OSError:
        return


def bootstrap_code() -> dict[str, str]:
    """The kernel's module name -> the compiled code of every shipped module (marshal, zlib,
    base64: no bigger than the source, whose size the kernel's handling of the boot cell
    grows with): only for a kernel running this interpreter, whose marshal format it is."""
    bootstrap_sources()
    assert _COMPILED is not None
    return _COMPILED


def bootstrap_cell(config: dict[str, Any], *, compiled: bool = False) -> str:
    """The cell that installs the runtime's side in a kernel: the shipped modules as source,
    or *compiled* (`bootstrap_code`) for a kernel running this interpreter."""
    modules = bootstrap_code() if compiled else bootstrap_sources()
    return (
        f"(lambda g: (exec({_BOOT!r}, g), g['_cave_boot']({modules!r}, "
        f"{config!r}, {compiled!r})))({{'get_ipython': get_ipython}})"
    )


def kernel_argv(python: str, connection_file: str) -> list[str]:
    """ipykernel with history and output caching off (the runtime keeps neither)."""
    return [
        python,
        "-c",
        KERNEL_MAIN,
        "-f",
        connection_file,
        "--HistoryManager.enabled=False",
        "--InteractiveShell.cache_size=0",
        "--IPKernelApp.quiet=True",
    ]


def host_paths() -> list[str]:
    """The host's own import directories (scripts, projects), appended in the kernel
    so functions injected by reference from them resolve; never ahead of the stdlib."""
    prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
    out = []
    for entry in sys.path:
        path = os.path.abspath(entry or os.getcwd())
        if os.path.isdir(path) and not path.startswith(prefixes) and path not in out:
            out.append(path)
    return out
