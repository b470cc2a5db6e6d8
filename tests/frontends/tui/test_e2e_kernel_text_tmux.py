"""The real app in tmux: strings the kernel chose never drive the terminal nor crash the app.

The kernel's names, reprs, class names, frame cells and answer hold an OSC 0 (set the title)
and an OSC 52 (write the clipboard; with tmux's `set-clipboard on` it would become a paste
buffer); a frame's columns are named `[/]` and `weight [kg]`, which Rich markup would read.
"""

from __future__ import annotations

import shutil
import time

import pytest
import yaml

from .test_e2e_tmux import CAVE, Tmux, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CELL = r"""import pandas as pd
E = '\x1b]0;PWNED\x07'
C = '\x1b]52;c;cm0gLXJmIH4K\x07'
globals()['bad' + E] = 1
K = type('Cls' + E, (), {'__repr__': lambda self: 'rep' + E + C})
obj = K()
frame = pd.DataFrame({'[/]': [1, 2], 'weight [kg]': [3.5, 4.5], 's': ['cell' + E, 'x' + C]})
print('printed' + E + C)
final_answer('answer' + E + C + ' [/] end')"""
DETAIL_BUTTONS = "Retrieve to file (r)"
TABLE_KEYS = "⏎ Details"
# The model's own prose carries the same sequences (raw characters, not Python escapes).
REPLY = f"Setting up\x1b]0;PROSE\x07 now.\n\n```python\n{CELL}\n```"


def test_kernel_text_never_drives_the_terminal_nor_crashes_the_detail_view(tmux, tmp_path):  # noqa: F811
    script = tmp_path / "replies.yaml"
    script.write_text(yaml.safe_dump([REPLY]))
    command = [str(CAVE), "--in-process", "--policy", "trusted", "--model", f"scripted:{script}"]
    tmux.start(command, width=150, height=45)
    tmux.run("set-option", "-s", "set-clipboard", "on")  # OSC 52 would make a paste buffer
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")  # the runtime is up
    title = tmux.run("display-message", "-p", "#{pane_title}")
    tmux.keys("-l", "set it up")
    tmux.keys("Enter")
    tmux.wait_for("step 1 · agent · ok")  # the turn ran

    def unharmed() -> None:
        assert tmux.run("display-message", "-p", "#{pane_title}") == title
        assert tmux.run("list-buffers") == "", "an OSC 52 clipboard write reached tmux"
        assert "CAVE-EXIT" not in tmux.screen()

    unharmed()
    screen = tmux.wait_for("answer [/] end")  # the answer whole, its escapes dropped
    rows = screen.splitlines()
    assert any("bad " in row and " int " in row for row in rows), screen  # the name, cut clean
    assert any("obj " in row and " Cls " in row and "rep" in row for row in rows), screen
    # The frame's detail view, from the inspector: F2, filter, Enter to the table, Enter.
    tmux.keys("F2")
    screen = open_detail(tmux, "frame", "weight [kg]")  # the frame as a table
    screen = tmux.wait_for("3.5")  # its rows arrived
    head = [row for row in screen.splitlines() if "weight [kg]" in row]
    assert any("[/]" in row for row in head), screen  # both labels whole, the unit kept
    assert any("3.5" in row and "cell" in row for row in screen.splitlines()), screen
    unharmed()
    close_detail(tmux)
    tmux.keys("C-f", *["BSpace"] * len("frame"))  # empty the filter
    tmux.wait_for("Namespace (7)")
    open_detail(tmux, "obj", "obj · Cls")  # its class name and repr
    unharmed()
    close_detail(tmux)
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")


def open_detail(tmux: Tmux, name: str, shown: str) -> str:  # noqa: F811
    """Filter the inspector to *name*, Enter to the table, Enter: the screen once *shown*.

    Each key waits for the focus it needs (the key bar names the focused widget's keys).
    """
    tmux.keys("C-f")
    wait_gone(tmux, TABLE_KEYS)  # the filter has the focus
    tmux.keys("-l", name)
    tmux.wait_for("(1 of 7)")
    tmux.keys("Enter")
    tmux.wait_for(TABLE_KEYS)  # the table has the focus
    tmux.keys("Enter")
    return tmux.wait_for(shown)


def wait_gone(tmux: Tmux, text: str) -> None:  # noqa: F811
    deadline = time.monotonic() + 10
    while text in tmux.screen():
        assert time.monotonic() < deadline, tmux.screen()
        time.sleep(0.1)  # polling the screen, with a deadline


def close_detail(tmux: Tmux) -> None:  # noqa: F811
    """Esc, then wait: a key sent at once after Esc would be read as Alt+key. The view's
    rows come a moment after it opens: Esc waits as a person would (an answer key sooner
    than the dialog's grace is dropped, screens/base.py)."""
    time.sleep(1.0)
    tmux.answer("Escape")
    wait_gone(tmux, DETAIL_BUTTONS)
