"""Toad (PyPI batrachian-toad), a third-party ACP front end, driving `cave acp` in tmux.

Toad runs on Python >= 3.14: .ci/toad.sh installs it in its own venv and .ci/run passes
its path in CAVE_TOAD with CAVE_REQUIRE_TOAD=1 (then a missing Toad fails this test).
Elsewhere the test looks in .ci/toad.sh's cache and on PATH, and skips saying so.
"""

from __future__ import annotations

import json
import os
import shlex
import shutil
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.tmux import Tmux

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CAVE = Path(sys.executable).with_name("cave")
TOAD_CACHE = Path.home() / ".cache" / "cave-ci" / "toad" / "venv" / "bin" / "toad"
XDG = ("CONFIG", "DATA", "STATE", "CACHE")  # Toad's settings and data go under tmp
BUSY = "⌛"  # Toad's mark of a tool call (and a session) still running
REPLIES = [
    # 1: text, then a cell allowed; the text is on screen before the cell may run
    "Setting it now.\n\n```python\nanswer_value = 41 + 1\n```",
    "Done: the answer is set.",
    # 2: a cell denied
    "Writing the file.\n\n```python\nopen('denied.txt', 'w').write('ran')\n```",
    "Understood: the file was not written.",
    # 3: a cell cancelled mid-run
    "Sleeping.\n\n```python\nimport time\ntime.sleep(60)\n"
    "open('slept.txt', 'w').write('woke')\n```",
    # 4: the namespace survived
    "Reading it.\n\n```python\nprint('answer_value is', answer_value)\n```",
    "The namespace kept answer_value.",
]


def toad_command() -> str:
    """Toad's executable: $CAVE_TOAD, .ci/toad.sh's cache, or `toad` on PATH; a missing one
    fails the test when CAVE_REQUIRE_TOAD=1 (CI) and skips it otherwise."""
    for candidate in (os.environ.get("CAVE_TOAD"), str(TOAD_CACHE), shutil.which("toad")):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    reason = "Toad is not installed: run `bash .ci/toad.sh` (it needs Python 3.14)"
    if os.environ.get("CAVE_REQUIRE_TOAD") == "1":
        pytest.fail(f"CAVE_REQUIRE_TOAD=1 but {reason}")
    pytest.skip(reason)


def json_list(replies: list[str]) -> str:
    """*replies* as the script's YAML: a JSON list is YAML."""
    return json.dumps(replies, indent=1)


@pytest.fixture
def tmux(tmp_path: Path):
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.kill()


def prompt(tmux: Tmux, text: str) -> None:
    """Paste *text* into Toad's prompt as one line and send it."""
    tmux.wait_for("How can I help you today?")
    tmux.paste(text)
    tmux.wait_for(f"▊ ❯ {text}")  # in the prompt box
    tmux.keys("Enter")
    tmux.wait_gone(f"▊ ❯ {text}", timeout=10)  # sent: the box is emptied


def tool_line_after(screen: str, text: str) -> str:
    """The tool call's line that follows the agent's line *text* on *screen*."""
    lines = screen.splitlines()
    start = next(i for i, line in enumerate(lines) if text in line)
    return next(line for line in lines[start:] if "🔧" in line)


def test_toad_drives_cave_acp_prompt_cells_permission_and_cancel(tmux, tmp_path):
    toad = toad_command()
    (tmp_path / "replies.yaml").write_text(json_list(REPLIES), encoding="utf-8")
    home = tmp_path / "home"
    home.mkdir()
    # cave as Toad's agent, with the test process's PYTHONPATH (a checkout under test), on
    # the kernel runtime (cave acp's default; the tests' environment says in-process): a
    # cancel interrupts the kernel's cell even in native code such as time.sleep
    agent = shlex.join(
        [
            "env",
            f"PYTHONPATH={os.environ.get('PYTHONPATH', '')}",
            str(CAVE), "acp", "--approve", "ask", "--kernel",
            "--model", f"scripted:{tmp_path / 'replies.yaml'}",
        ]
    )  # fmt: skip
    tmux.start(
        ["env", "-u", "PYTHONPATH", toad, "acp", "--title", "cave", shlex.quote(agent)],
        width=140,
        height=45,
        env={"HOME": str(home), **{f"XDG_{kind}_HOME": str(home / kind.lower()) for kind in XDG}},
    )

    # Toad has started cave and opened a session (a prompt sent before is lost)
    tmux.wait_for("How can I help you today?", timeout=60)
    tmux.wait_gone("Initializing…", timeout=60)

    # A prompt, its answer streamed: the text is shown while the turn waits on the cell's
    # permission (the turn cannot have ended), and the permission shows the cell's code.
    prompt(tmux, "set the answer value")
    tmux.wait_for("Run this cell", timeout=60)
    screen = tmux.wait_for("Setting it now.")
    assert "Run this cell" in screen and "answer_value = 41 + 1" in screen, screen  # its code
    assert "Done: the answer is set." not in screen, screen
    tmux.keys("a")
    screen = tmux.wait_for("Done: the answer is set.")
    assert BUSY not in tool_line_after(screen, "Setting it now."), screen

    # A permission denied: the cell is shown as a tool call with its code, and did not run.
    prompt(tmux, "write the file")
    screen = tmux.wait_for("Run this cell")
    assert "open('denied.txt', 'w').write('ran')" in screen, screen
    tmux.keys("r")
    screen = tmux.wait_for("Understood: the file was not written.")
    assert "open('denied.txt', 'w').write('ran')" in screen, screen  # the tool call's code
    assert not (tmp_path / "denied.txt").exists()

    # A cancel mid-cell (Toad: Esc twice): the turn stops within seconds, the cell's tool
    # call is shown stopped, and the kernel is free again (the next cell is not queued
    # behind the 60 s sleep).
    prompt(tmux, "sleep for a while")
    tmux.wait_for("Run this cell")
    tmux.keys("a")
    screen = tmux.wait_for(BUSY)
    time.sleep(1.0)  # the cell is under way
    assert BUSY in tool_line_after(tmux.screen(), "Sleeping."), tmux.screen()
    cancelled_at = time.monotonic()
    tmux.keys("Escape")
    time.sleep(0.3)
    tmux.keys("Escape")
    tmux.wait_for("Turn cancelled", timeout=10)
    deadline = time.monotonic() + 10
    while BUSY in tool_line_after(tmux.screen(), "Sleeping."):
        assert time.monotonic() < deadline, "the cancelled cell still runs:\n" + tmux.screen()
        time.sleep(0.1)  # polling the screen, with a deadline

    # A later prompt works, on the namespace that survived the cancel.
    prompt(tmux, "read the answer value")
    tmux.wait_for("Run this cell")
    tmux.keys("a")
    tmux.wait_for("The namespace kept answer_value.")
    assert time.monotonic() - cancelled_at < 45, "the next cell waited for the cancelled one"
    time.sleep(1.0)  # the turn's end drawn: block keys now move among the finished blocks
    for _ in range(2):  # up from the last block (the answer) to the cell's tool call
        tmux.keys("M-Up")
        time.sleep(0.3)
    tmux.keys("Space")
    screen = tmux.wait_for("answer_value is 42")  # expanded: its code and its output
    assert "print('answer_value is', answer_value)" in screen, screen
    assert not (tmp_path / "slept.txt").exists()
