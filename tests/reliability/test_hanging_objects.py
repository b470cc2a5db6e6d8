"""Objects whose own methods never return (issue 29, items 4 and 5), through `cave run`.

The kernel's cell hooks, the checkpoint after each cell, the session snapshot and the exit
dump all meet every variable; a model-written `__len__`, `__sizeof__` or `__getstate__` that
loops must cost a bounded wait, lose no other variable, and leave the session closed.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

from tests.helpers.hanging import LAZY
from tests.reliability.real_cave import cave, code, script

STICKY = """
class Sticky:
    def __getstate__(self):
        while True:
            pass
sticky = Sticky()
"""


def _meta(sessions: Path) -> dict[str, object]:
    (folder,) = [p for p in sessions.iterdir() if p.is_dir()]
    return json.loads((folder / "meta.json").read_text())


def test_a_len_that_hangs_loses_no_later_variable(tmp_path):
    model = script(
        tmp_path / "m.yaml",
        [code("x = 41"), code(LAZY), code("y = 5"), code("print(x + y)"), "done"],
    )
    started = time.monotonic()
    result = cave(
        "run", "go", "--model", model, "--cell-timeout", "3", "--sessions-dir", "s",
        "--json", cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert any(e.get("output") == "46\n" for e in events), result.stdout[-2000:]
    assert "No variables were lost" not in result.stdout
    assert time.monotonic() - started < 60


def test_a_getstate_that_hangs_does_not_wedge_the_run_or_its_dump(tmp_path):
    model = script(
        tmp_path / "m.yaml",
        [code("x = 41"), code(STICKY), code("y = 5"), code("print(x + y)"), "done"],
    )
    started = time.monotonic()
    result = cave(
        "run", "go", "--model", model, "--cell-timeout", "2", "--sessions-dir", "s",
        "--dump", "out", "--policy", "trusted", "--json", cwd=tmp_path, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert time.monotonic() - started < 60
    events = [json.loads(line) for line in result.stdout.splitlines()]
    assert any(e.get("output") == "46\n" for e in events), result.stdout[-2000:]
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert {v["name"] for v in manifest["variables"]} >= {"x", "y"}
    assert "sticky" in {s["name"] for s in manifest["skipped"]}
    assert _meta(tmp_path / "s")["status"] == "completed"
