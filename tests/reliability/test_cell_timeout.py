"""`cave run --cell-timeout` stops `while True: pass` in process and in the kernel; work goes on."""

from __future__ import annotations

import pytest

from tests.reliability.real_cave import cave, code, script


@pytest.mark.parametrize("runtime", ["--no-kernel", "--kernel"])
def test_an_endless_loop_is_stopped_and_the_next_cell_works(tmp_path, runtime):
    replies = [code("kept = 41"), code("while True: pass"), code("print(kept + 1)"), "done"]
    model = script(tmp_path / "m.yaml", replies)
    result = cave(
        "run", "go", "--model", model, "--cell-timeout", "1", runtime, "--sessions-dir", "s",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert "cell timed out after 1s and was stopped (KeyboardInterrupt)." in lines
    assert "42" in lines  # the namespace survived and the next cell ran
    assert "completed · 4 steps" in result.stdout


def test_a_negative_cell_timeout_is_refused(tmp_path):
    result = cave("run", "go", "--model", "scripted:x.yaml", "--cell-timeout", "-1", cwd=tmp_path)
    assert result.returncode == 2 and "--cell-timeout" in result.stderr
