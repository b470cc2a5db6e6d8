"""The real app in tmux, started as a user starts it: the kernel sandboxed by default, and the
status line and the start notice say so."""

from __future__ import annotations

import shutil

import pytest

from .test_e2e_tmux import CAVE, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_the_app_starts_the_kernel_sandboxed_and_says_so(tmux, tmp_path):  # noqa: F811
    """... and `/inject` still reads a file outside the working folder, which the sandboxed
    kernel cannot see: the app reads it and sends the value."""
    work, elsewhere = tmp_path / "work", tmp_path / "elsewhere"
    work.mkdir()
    elsewhere.mkdir()
    (elsewhere / "given.csv").write_text("x,y\n3,4\n")
    (tmp_path / "m.yaml").write_text("- hello\n")
    tmux.start(
        ["env", "-u", "CAVE_KERNEL", "-u", "CAVE_SANDBOX", str(CAVE), "--workdir", str(work),
         "--model", f"scripted:{tmp_path / 'm.yaml'}", "--policy", "trusted"],
        width=160, height=40,
    )  # fmt: skip
    tmux.wait_for("│ kernel (sandbox)", timeout=60)  # the status line
    tmux.wait_for("It is sandboxed (bubblewrap)")  # the start notice
    tmux.keys("-l", f"/inject {elsewhere / 'given.csv'} as given")
    tmux.keys("Enter")
    tmux.wait_for("Injected given: DataFrame", timeout=30)
    tmux.keys(
        "-l", f"!print('SEEN', given.shape, __import__('os').path.exists({str(elsewhere)!r}))"
    )
    tmux.keys("Enter")
    tmux.wait_for("SEEN (1, 2) False", timeout=30)
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
