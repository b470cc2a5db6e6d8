"""The modules that run inside the kernel sit in one package, cave_tui.runtime.shipped, and
import nothing of cave_tui outside it (the kernel receives them as source, without cave)."""

from __future__ import annotations

import ast
import base64
import builtins
import dis
import marshal
import tomllib
import zlib
from pathlib import Path
from typing import Any

import grimp
import pytest

from cave_tui.runtime.kernel.install import (
    KERNEL_MODULES,
    ShippedImportError,
    bootstrap_cell,
    bootstrap_code,
    bootstrap_sources,
    kernel_source,
)
from cave_tui.runtime.kernel.process import LAUNCHER
from cave_tui.runtime.shipped import SHIPPED_DIR

SHIPPED = "cave_tui.runtime.shipped"
ROOT = Path(__file__).resolve().parents[3]


def test_every_shipped_module_is_sent_to_the_kernel_or_run_there_as_the_launcher() -> None:
    on_disk = {p.stem for p in SHIPPED_DIR.glob("*.py")} - {"__init__"}
    assert on_disk == set(KERNEL_MODULES.values()) | {Path(LAUNCHER).stem}
    assert Path(LAUNCHER).parent == SHIPPED_DIR


def test_the_shipped_modules_import_nothing_of_cave_tui_outside_their_package() -> None:
    graph = grimp.build_graph("cave_tui", cache_dir=None)
    outside = {
        (m, imported)
        for m in graph.find_descendants(SHIPPED) | {SHIPPED}
        for imported in graph.find_modules_directly_imported_by(m)
        if imported.startswith("cave_tui") and not imported.startswith(SHIPPED)
    }
    assert outside == set()
    # The import-linter contract names every other module of cave_tui (or a package of it).
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    (contract,) = [
        c
        for c in config["tool"]["importlinter"]["contracts"]
        if c.get("source_modules") == [SHIPPED]
    ]
    forbidden = contract["forbidden_modules"]
    ancestors = {"cave_tui", "cave_tui.runtime"}
    uncovered = sorted(
        m
        for m in graph.modules
        if m.startswith("cave_tui")
        and m not in ancestors
        and not m.startswith(SHIPPED)
        and not any(m == f or m.startswith(f + ".") for f in forbidden)
    )
    assert uncovered == []


def test_the_kernel_gets_each_shipped_module_with_its_imports_renamed() -> None:
    sources = bootstrap_sources()
    assert list(sources) == list(KERNEL_MODULES)
    assert "from _cave_summary import bounded_repr, summarize" in sources["_cave_detail"]
    for name, text in sources.items():
        assert "cave_tui" not in "\n".join(
            line for line in text.splitlines() if line.lstrip().startswith(("from ", "import "))
        ), name


def test_a_kernel_running_this_interpreter_gets_the_same_modules_compiled() -> None:
    """A kernel cave launched runs the host's interpreter: it gets the bytecode the host
    compiled when it checked each module (named as the kernel names it), and no source to
    compile again; any other kernel (attached, behind a gateway) gets the source."""
    from cave_tui.runtime.kernel.gateway import GatewayKernel
    from cave_tui.runtime.kernel.kinds import AttachedKernel, OwnedKernel

    sources = bootstrap_sources()
    compiled = bootstrap_code()
    assert list(compiled) == list(sources)
    for name, text in sources.items():
        code = marshal.loads(zlib.decompress(base64.b64decode(compiled[name])))
        again = compile(text, f"<{name}>", "exec", dont_inherit=True)
        assert code.co_filename == f"<{name}>"
        assert code.co_code == again.co_code and code.co_names == again.co_names
    # the kernel's handling of the boot cell grows with its size: no bigger than the source
    assert sum(map(len, compiled.values())) <= 1.1 * sum(map(len, sources.values()))
    line = "def bounded_repr(obj: Any, limit: int = PREVIEW_CHARS) -> str:"
    assert line in sources["_cave_summary"]
    assert line in bootstrap_cell({"output_limit": 10})
    assert line not in bootstrap_cell({"output_limit": 10}, compiled=True)
    assert OwnedKernel.runs_this_python
    assert not AttachedKernel.runs_this_python and not GatewayKernel.runs_this_python


@pytest.mark.parametrize(
    "line",
    [
        "from cave_tui.printable import printable",
        "import cave_tui.runtime.base",
        "    from cave_tui.runtime.shipped.launcher import main",
    ],
)
def test_a_shipped_module_that_imports_other_cave_code_is_refused(line: str) -> None:
    with pytest.raises(ShippedImportError):
        kernel_source("summary", f"def f():\n    pass\n\n\nif True:\n    {line.strip()}\n")


def test_reading_the_shipped_modules_builds_no_ast_objects(monkeypatch: pytest.MonkeyPatch) -> None:
    """The kernel's boot reads them on the runtime's I/O thread while a front end imports its
    SDK on another; CPython 3.11 builds `ast` objects unsafely on two threads at once."""
    built = []
    compile_ = builtins.compile

    def recording(
        source: Any, filename: Any, mode: str, flags: int = 0, *args: Any, **kw: Any
    ) -> Any:
        if flags & ast.PyCF_ONLY_AST:
            built.append(filename)
        return compile_(source, filename, mode, flags, *args, **kw)

    monkeypatch.setattr(builtins, "compile", recording)
    for stem in KERNEL_MODULES.values():
        kernel_source(stem)
    with pytest.raises(ShippedImportError):
        kernel_source("summary", "def f():\n    import cave_tui.printable\n")
    assert built == []


def test_reading_the_shipped_modules_walks_no_bytecode_that_names_no_cave(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Each kernel boot waits for `bootstrap_sources`: the bytecode walk, several times the
    compile's cost, is left out where no block of a module names cave_tui."""
    walked: list[str] = []
    get_instructions = dis.get_instructions

    def recording(code: Any, *args: Any, **kw: Any) -> Any:
        walked.append(code.co_filename)
        return get_instructions(code, *args, **kw)

    monkeypatch.setattr(dis, "get_instructions", recording)
    for stem in KERNEL_MODULES.values():
        kernel_source(stem)
    assert walked == []
    with pytest.raises(ShippedImportError):
        kernel_source("summary", "def f():\n    import cave_tui.printable\n")
    assert walked


async def test_a_boot_reads_the_shipped_modules_while_the_kernel_starts(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not once the kernel is up: the reading would then stand between it and its first cell."""
    import asyncio
    import time

    from cave_tui.runtime.kernel import install
    from cave_tui.runtime.kernel.checkpoint import CheckpointStore
    from cave_tui.runtime.kernel.kinds import KernelHost, OwnedKernel
    from cave_tui.runtime.kernel.settings import KernelSettings
    from cave_tui.runtime.kernel.supervisor import KernelSupervisor

    monkeypatch.setattr(install, "_SOURCES", None)
    seen: list[bool] = []

    class Starting(OwnedKernel):
        async def start(self, sup: KernelHost) -> dict[str, Any]:
            deadline = time.monotonic() + 10
            while install._SOURCES is None and time.monotonic() < deadline:
                await asyncio.sleep(0.01)
            seen.append(install._SOURCES is not None)
            raise RuntimeError("no kernel in this test")

    settings = KernelSettings()
    sup = KernelSupervisor(Starting(settings), settings, CheckpointStore(0), {}, lambda _c: None)
    with pytest.raises(RuntimeError, match="no kernel"):
        await sup.boot(restore=False)
    assert seen == [True]
    assert sup.ctx is not None
    sup.ctx.destroy(linger=0)


def test_building_the_kernel_runtime_leaves_jupyter_client_to_the_boot() -> None:
    """jupyter_client (the channel's) is imported while the kernel process starts, not on
    the way to launching it."""
    import subprocess
    import sys

    from tests.helpers.paths import REPO_ROOT

    code = (
        "import sys\n"
        "from cave_tui.app.config import Config\n"
        "from cave_tui.app.runtime_choice import config_runtime\n"
        "config_runtime(Config(kernel=True, sandbox=False))\n"
        "print('jupyter_client' in sys.modules, 'zmq' in sys.modules)\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", code],
        capture_output=True,
        text=True,
        timeout=60,
        cwd=REPO_ROOT,
        env={"PYTHONPATH": str(REPO_ROOT), "PATH": "/usr/bin:/bin"},
        check=True,
    )
    assert done.stdout.split() == ["False", "False"], done.stderr


def test_the_checked_and_compiled_modules_are_kept_per_version_of_their_text(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A `cave` process reads them from the package's __pycache__ instead of checking and
    compiling them again (a tenth of a second of each start); a kept file that is not what
    it should be is made again, and a changed module is another key."""
    from cave_tui.runtime.kernel import install

    monkeypatch.setattr(install, "_cache_dir", lambda: tmp_path)
    monkeypatch.setattr(install, "_SOURCES", None)
    first = dict(bootstrap_sources()), dict(bootstrap_code())
    (kept,) = tmp_path.glob("kernel-boot.*.marshal")

    def refuse(stem: str, text: str | None = None) -> Any:
        raise AssertionError("checked again although kept")

    monkeypatch.setattr(install, "_checked", refuse)
    monkeypatch.setattr(install, "_SOURCES", None)
    assert (bootstrap_sources(), bootstrap_code()) == first
    kept.write_bytes(b"not marshal data")
    monkeypatch.setattr(install, "_SOURCES", None)
    with pytest.raises(AssertionError, match="checked again"):
        bootstrap_sources()
    monkeypatch.undo()
    monkeypatch.setattr(install, "_cache_dir", lambda: tmp_path)
    monkeypatch.setattr(install, "_SOURCES", None)
    assert (bootstrap_sources(), bootstrap_code()) == first  # made again
    assert marshal.loads(kept.read_bytes()) == first
    raw = {name: (SHIPPED_DIR / f"{stem}.py").read_text() for name, stem in KERNEL_MODULES.items()}
    changed = {**raw, "_cave_lazy": raw["_cave_lazy"] + "\n# changed\n"}
    assert install._cache_path(changed) != install._cache_path(raw) == kept
