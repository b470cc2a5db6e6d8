"""What the host installs in a kernel: the command that starts it and the runtime's
kernel-side code, shipped as source so the kernel needs nothing of cave installed."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path
from typing import Any

_HERE = Path(__file__).resolve().parent  # runtime/kernel/: the kernel-side modules
_RUNTIME = _HERE.parent  # runtime/: modules the host and the kernel both run

_BOOT = """
def _cave_boot(sources, config):
    import sys, types
    current = sys.modules.get("_cave_kernel")
    if current is not None and getattr(current, "agent", None) is not None:
        current.agent.config.update(config)
        return
    for name, src in sources.items():
        module = types.ModuleType(name)
        module.__file__ = "<" + name + ">"
        sys.modules[name] = module
        exec(compile(src, module.__file__, "exec"), module.__dict__)
    for entry in config.get("extra_paths", []):
        if entry not in sys.path:
            sys.path.append(entry)
    sys.modules["_cave_kernel"].install(get_ipython(), config)
"""


def _mutation_source() -> str:
    """`mutation_targets` from ipython.py, without importing IPython in the host."""
    text = (_RUNTIME / "ipython.py").read_text()
    parts = ["import ast"]
    for node in ast.parse(text).body:
        if (
            isinstance(node, ast.Assign)
            and any(isinstance(t, ast.Name) and t.id == "_MUTATORS" for t in node.targets)
        ) or (isinstance(node, ast.FunctionDef) and node.name == "mutation_targets"):
            parts.append(ast.get_source_segment(text, node) or "")
    return "\n\n".join(parts)


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


def bootstrap_sources() -> dict[str, str]:
    global _SOURCES
    if _SOURCES is None:
        _SOURCES = {
            "_cave_summary": (_RUNTIME / "summary.py").read_text(),
            "_cave_links": (_RUNTIME / "links.py").read_text(),
            "_cave_tracebacks": (_RUNTIME / "tracebacks.py").read_text(),
            "_cave_transport": (_HERE / "transport.py").read_text(),
            "_cave_mutation": _mutation_source(),
            "_cave_display": (_RUNTIME / "display.py").read_text(),
            "_cave_persist": (_RUNTIME / "persist.py").read_text(),
            "_cave_detail": (_RUNTIME / "detail.py")
            .read_text()
            .replace("from cave_tui.runtime.summary import", "from _cave_summary import"),
            "_cave_kernel": (_HERE / "bootstrap.py").read_text(),
        }
    return _SOURCES


def bootstrap_cell(config: dict[str, Any]) -> str:
    return (
        f"(lambda g: (exec({_BOOT!r}, g), g['_cave_boot']({bootstrap_sources()!r}, "
        f"{config!r})))({{'get_ipython': get_ipython}})"
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
