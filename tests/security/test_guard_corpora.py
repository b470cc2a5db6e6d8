"""`standard` stays out of everyday work and keeps refusing what destroys (issue 30).

The cells are data in tests/security/cells/*.cells: Python, one cell after each
`# %% title` line. Checker only: no runtime is needed to show what the guard refuses.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from cave_tui.security import SecurityChecker

CELLS = Path(__file__).parent / "cells"
_MARK = re.compile(r"^# %% (.+)$", re.MULTILINE)
# The rules that stand for "this destroys or runs programs" in an unsandboxed standard.
HARM_RULES = {"ShellRule", "DestructionRule", "ImportRule", "LiteralNameRule"}


def load_cells(*names: str) -> list[tuple[str, str]]:
    """(title, code) for every `# %% title` cell of the named files."""
    cells = []
    for name in names:
        text = (CELLS / name).read_text(encoding="utf-8")
        marks = list(_MARK.finditer(text))
        for mark, after in zip(marks, [*marks[1:], None], strict=True):
            end = after.start() if after else len(text)
            cells.append((mark.group(1).strip(), text[mark.end() : end].strip() + "\n"))
    return cells


EVERYDAY = load_cells("everyday_files.cells", "everyday_analysis.cells")
DESTRUCTIVE = load_cells("destructive.cells")


@pytest.fixture(scope="module")
def standard() -> SecurityChecker:
    return SecurityChecker.for_policy("standard")


def test_the_corpora_are_big_and_distinct():
    assert len(EVERYDAY) >= 200 and len(DESTRUCTIVE) >= 40
    for cells in (EVERYDAY, DESTRUCTIVE):
        assert len({title for title, _ in cells}) == len(cells)
        assert len({code for _, code in cells}) == len(cells)


@pytest.mark.parametrize(("title", "code"), EVERYDAY, ids=[t for t, _ in EVERYDAY])
def test_standard_refuses_no_everyday_cell(standard, title, code):
    violations = standard.check(code)
    assert violations == [], f"{title}: {[str(v) for v in violations]}"


@pytest.mark.parametrize(("title", "code"), DESTRUCTIVE, ids=[t for t, _ in DESTRUCTIVE])
def test_standard_refuses_every_destructive_cell(standard, title, code):
    violations = standard.check(code)
    assert violations, f"{title} was let through"
    rules = {v.rule for v in violations}
    assert rules & HARM_RULES, f"{title} refused only for {[str(v) for v in violations]}"


def test_the_sandboxed_standard_leaves_shells_and_deletes_to_the_sandbox():
    sandboxed = SecurityChecker.for_policy("standard", sandboxed=True)
    assert sandboxed.check("import subprocess\nsubprocess.run(['ls'])") == []
    assert sandboxed.check("import shutil\nshutil.rmtree('/data/old')") == []
    assert sandboxed.check("import os\nos.system('ls')") == []
    assert sandboxed.check("import ctypes\nimport multiprocessing") == []
    # what hides code from any check stays refused in every mode
    assert sandboxed.check("eval('1')")
    assert sandboxed.check("().__class__.__base__.__subclasses__()")
    for title, code in EVERYDAY:
        assert sandboxed.check(code) == [], title
    assert "sandbox" in sandboxed.prompt_line()


def test_paths_are_judged_against_the_working_folder(tmp_path, monkeypatch):
    """An absolute path inside the working folder is local; the folder itself is not."""
    monkeypatch.chdir(tmp_path)
    checker = SecurityChecker.for_policy("standard")
    inside = tmp_path / "out"
    assert checker.check(f"import shutil\nshutil.rmtree({str(inside)!r})") == []
    assert checker.check(f"import shutil\nshutil.rmtree({str(tmp_path)!r})")
    assert checker.check(f"open({str(tmp_path.parent / 'x.txt')!r}, 'w')") or str(
        tmp_path.parent
    ).startswith("/tmp")
    monkeypatch.chdir("/")  # a kernel working in / has no folder of its own to keep to
    assert checker.check("import shutil\nshutil.rmtree('srv')")


PRINTERS = ["print_jpg", "print_tif", "print_rgba", "print_raw", "print_png", "print_pdf",
            "print_svg", "print_webp", "print_eps"]  # fmt: skip


@pytest.mark.parametrize("printer", PRINTERS)
def test_strict_treats_every_canvas_printer_as_a_file_writer(printer):
    strict = SecurityChecker.for_policy("strict")
    setup = "import matplotlib.pyplot as plt\nfig = plt.figure()\n"
    for spelling in (
        f"fig.canvas.{printer}('/tmp/x')",
        f"fig.canvas.{printer}('out.bin')",
        f"fig.canvas.{printer}(filename='/etc/x')",
        f"p = fig.canvas.{printer}\np('/tmp/x')",
        f"getattr(fig.canvas, {printer!r})('/tmp/x')",
        f"from matplotlib.backends.backend_agg import FigureCanvasAgg\n"
        f"FigureCanvasAgg.{printer}(fig.canvas, '/tmp/x')",
    ):
        assert strict.check(setup + spelling), spelling
    # a buffer made in the cell is where strict lets figures go
    assert strict.check(setup + f"import io\nbuf = io.BytesIO()\nfig.canvas.{printer}(buf)") == []
    # a function of the same name in the cell does not hide matplotlib's
    own = f"def {printer}(x):\n    return x\nfig.canvas.{printer}('/tmp/x')"
    assert strict.check(setup + own)


async def test_a_real_runtime_runs_everyday_file_work_and_blocks_a_dotfile_write(
    tmp_path, monkeypatch
):
    from cave_tui.runtime import IPythonRuntime

    home = tmp_path / "home"
    home.mkdir()
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(work)
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy("standard"))
    try:
        wrote = await runtime.execute(
            "import json, os\nos.makedirs('out', exist_ok=True)\n"
            "with open('out/data.json', 'w') as f:\n    json.dump({'n': 3}, f)\n"
            "with open('out/data.json') as f:\n    n = json.load(f)['n']",
            timeout=30,
        )
        assert wrote.success, wrote.error_text
        assert await runtime.retrieve("n") == 3
        dotfile = await runtime.execute(
            "from pathlib import Path\n(Path.home() / '.bashrc').write_text('x')", timeout=30
        )
    finally:
        await runtime.stop()
    assert dotfile.blocked
    assert not (home / ".bashrc").exists()
