"""Issue 29, item 10: `cave run … | head -1` finishes its turn (recorded, dumped, exit code as
for the result) with the rest of its output dropped; a closed standard input is said, not a
traceback (`cave --plain <&-`), and `cave run` needs none."""

from __future__ import annotations

import json

from tests.reliability.real_cave import CAVE, code, script, shell

MANY_LINES = 4000  # ~60 KB of cell output and more as rendered: past a pipe's buffer


def test_a_reader_that_stops_early_does_not_abandon_the_turn(tmp_path):
    model = script(
        tmp_path / "m.yaml",
        [code(f"for i in range({MANY_LINES}):\n    print('line', i)\nx = 42"), "x is 42."],
    )
    # stdin closed as well: `cave run` reads nothing from it.
    run = f"'{CAVE}' run go --in-process --model '{model}' --dump out <&-"
    done = shell(f"{{ {run}; echo $? > rc; }} | head -1", cwd=tmp_path)
    assert done.stdout.count("\n") == 1, done.stdout
    assert (tmp_path / "rc").read_text().strip() == "0", done.stderr
    assert "Traceback" not in done.stderr and "BrokenPipe" not in done.stderr
    (meta,) = (tmp_path / "sessions").glob("*/meta.json")
    assert json.loads(meta.read_text())["status"] == "completed"
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    assert "x" in {v["name"] for v in manifest["variables"]}


def test_the_app_and_plain_with_stdin_closed_say_so_and_exit_2(tmp_path):
    model = script(tmp_path / "m.yaml", ["hi"])
    done = shell(f"'{CAVE}' --plain --in-process --model '{model}' <&-", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "standard input is closed" in done.stderr and "cave run TASK" in done.stderr
    assert "Traceback" not in done.stderr
