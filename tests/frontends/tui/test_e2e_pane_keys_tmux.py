"""The real app in tmux (issue 31, item 9): a line pasted while the inspector has the
focus lands in the input and Enter sends it; moved back to the inspector, Enter opens the
highlighted row. No clock decides which: the keys go as fast as tmux sends them."""

from __future__ import annotations

import shutil

import pytest

from .test_e2e_kernel_text_tmux import TABLE_KEYS, wait_gone
from .test_e2e_tmux import CAVE, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


def test_a_line_pasted_on_the_inspector_is_sent_and_enter_there_then_opens_the_row(tmux):  # noqa: F811
    tmux.start([str(CAVE), "--in-process"], width=120, height=40)
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")  # the runtime is up
    tmux.keys("-l", "!alpha = 41")
    tmux.keys("Enter")
    tmux.wait_for("Namespace (1)")
    tmux.keys("F2")
    tmux.wait_for(TABLE_KEYS)  # the table has the focus
    tmux.keys("-l", "!beta = alpha + 1")  # a paste, as tmux sends it: one burst of keys
    tmux.keys("Enter")
    tmux.wait_for("Namespace (2)")  # the line ran
    wait_gone(tmux, TABLE_KEYS)  # the input took the focus
    assert "Retrieve to file" not in tmux.screen()  # no detail view opened
    tmux.keys("F2")
    tmux.wait_for(TABLE_KEYS)
    tmux.keys("Enter")  # at once
    tmux.wait_for("Retrieve to file (r)")  # the detail view
    tmux.wait_for("alpha · int")  # of the highlighted row
    tmux.answer("Escape")
    wait_gone(tmux, "Retrieve to file (r)")
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
