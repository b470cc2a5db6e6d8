"""A line pasted as a dialog opens stays in the input, in the app in tmux (issue 31, item 7).

`/inject data.csv as list` asks whether to shadow the builtin `list`; a whole line sent at
once right after it (as a paste or fast typing) used to lose `/i`, answer No with the `n`
of "/inject", and send the rest to the model as a turn.
"""

from __future__ import annotations

import shutil
import time

import pytest

from .test_e2e_tmux import CAVE, Tmux, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

NEXT_LINE = "/inject ../data/penguins.csv"


def test_a_line_sent_as_the_dialog_opens_stays_in_the_input(tmux: Tmux, tmp_path):  # noqa: F811
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n")
    script = tmp_path / "replies.yaml"
    script.write_text('- "THE MODEL WAS ASKED"\n')
    tmux.start([str(CAVE), "--model", f"scripted:{script}"])
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")  # the runtime is up
    tmux.keys("-l", "/inject data.csv as list")
    tmux.keys("Enter")
    tmux.wait_for("shadow the Python builtin")
    tmux.keys("-l", NEXT_LINE)  # the whole line at once, then Enter, as the dialog opens
    tmux.keys("Enter")
    screen = tmux.wait_for(f"│ {NEXT_LINE}")  # in the input, not split
    time.sleep(1)  # the keys had time to do harm
    screen = tmux.screen()
    assert "shadow the Python builtin" in screen and "THE MODEL WAS ASKED" not in screen, screen
    tmux.keys("n")  # an explicit answer, after the dialog was on screen
    screen = tmux.wait_for("Not injected")  # answered No: the dialog is gone
    assert f"│ {NEXT_LINE}" in screen and "THE MODEL WAS ASKED" not in screen, screen
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
    history = (tmp_path / "data" / "history").read_text()
    assert "penguins" not in history  # nothing of the typed line was sent
