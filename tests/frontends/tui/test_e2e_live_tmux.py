"""The real `cave` in tmux: a running cell's output shows as it prints, and after Ctrl+C
the output stays and the inspector lists the names the cell made (issue 14.4, 14.7)."""

from __future__ import annotations

import shutil

import pytest

from .test_e2e_tmux import CAVE, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CELL = "!early = 41; import time; [print(f'tick {i}') for i in range(3)]; time.sleep(600)"


def test_output_streams_and_stays_after_ctrl_c_and_the_inspector_follows(tmux):  # noqa: F811
    tmux.start([str(CAVE)])
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")  # the runtime is up
    tmux.keys("-l", CELL)
    tmux.wait_for("time.sleep(600)")  # typed into the input
    tmux.keys("Enter")
    screen = tmux.wait_for("tick 2")  # printed while the cell still runs
    assert "you · running" in screen, screen
    tmux.keys("C-c")
    screen = tmux.wait_for("you · interrupted")
    assert "tick 0" in screen and "tick 2" in screen, screen  # the partial output is kept
    screen = tmux.wait_for("Namespace (2)")  # early and time
    assert any("early" in line and "int" in line for line in screen.splitlines()), screen
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
