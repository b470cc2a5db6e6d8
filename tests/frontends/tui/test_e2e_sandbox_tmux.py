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
    (tmp_path / "m.yaml").write_text("- hello\n")
    tmux.start(
        ["env", "-u", "CAVE_KERNEL", "-u", "CAVE_SANDBOX", str(CAVE),
         "--model", f"scripted:{tmp_path / 'm.yaml'}"],
        width=160, height=40,
    )  # fmt: skip
    screen = tmux.wait_for("│ kernel (sandbox)", timeout=60)  # the status line
    assert "It is sandboxed (bubblewrap): it writes only in" in screen, screen  # the notice
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
