"""Copy in a real terminal (issue 34, item 3): Ctrl+Y on a focused output sends OSC 52,
which reaches the terminal: tmux with `set-clipboard on` takes it into its paste buffer."""

from __future__ import annotations

import shutil
import time

import pytest

from .test_e2e_tmux import CAVE, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def _buffer(tmux, timeout: float = 15.0) -> str:  # noqa: F811
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        buffers = tmux.run("list-buffers", "-F", "#{buffer_name}")
        if buffers.strip():
            return tmux.run("show-buffer")
        time.sleep(0.1)  # polling tmux, with a deadline
    raise AssertionError("no OSC 52 reached tmux's paste buffer")


def test_ctrl_y_on_a_focused_output_reaches_the_terminal_clipboard(tmux):  # noqa: F811
    tmux.start([str(CAVE), "--in-process"], width=120, height=40)
    tmux.run("set-option", "-g", "set-clipboard", "on")
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")  # the runtime is up
    tmux.keys("-l", "!print('copied from the log')")
    tmux.keys("Enter")
    tmux.wait_for("you · ok")
    assert not tmux.run("list-buffers").strip()
    for _ in range(6):  # back from the input: the inspector's filter and table, the output
        tmux.keys("BTab")
        time.sleep(0.3)
        if "^y Copy" in tmux.screen():  # the key bar says how
            break
    tmux.wait_for("^y Copy", timeout=2)
    tmux.keys("C-y")
    assert _buffer(tmux) == "copied from the log"
    tmux.wait_for("Copied the output of your cell")
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
