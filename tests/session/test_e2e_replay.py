"""Issue 14.5 end to end: a session recorded through the real app in a 120-column tmux
terminal, with a `!` cell, an approval edit, a skipped step and a `final_answer`, replays
with `cave replay last --headless --check` without divergence: with stdout redirected
(a subprocess) and in a 120-column terminal."""

from __future__ import annotations

# ruff: noqa: E501 (the scripted replies are one line each)
import json
import os
import shutil
import subprocess
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

from cave_tui.session import SessionStore, read_session
from cave_tui.session.reader import StepRun, UserCell, recorded_turns
from tests.frontends.tui.test_e2e_tmux import CAVE, Tmux

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

REPLIES = """\
- "Adding it up.\\n\\n```python\\ntotal = int(wide.to_numpy().sum()) + offset\\nprint('total', total)\\n```"
- "Zeroing it.\\n\\n```python\\nwide = wide * 0\\nprint('zeroed')\\n```"
- "```python\\nfinal_answer(f'The total is {total}.')\\n```"
"""
# 30 columns: a terminal-sized pandas repr would differ between 120 and 80 columns.
WIDE_CELL = "!import pandas as pd; wide = pd.DataFrame({f'measure_{i}': range(3) for i in range(30)}); print(wide)"
APPROVAL_HINT = "Ctrl+E edit"


def _wait_record(folder: Path, wanted: Callable[[dict[str, Any]], bool], timeout: float = 30):
    """Wait until the session log holds a record *wanted* accepts (the recorder flushes each)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        for line in (folder / "events.jsonl").read_text().splitlines():
            record = json.loads(line)
            if wanted(record):
                return record
        time.sleep(0.1)  # polling the log, with a deadline
    raise AssertionError(f"no such record in {folder / 'events.jsonl'}")


def _record_in_the_app(tmux: Tmux, tmp_path: Path) -> Path:
    (tmp_path / "config").mkdir()
    (tmp_path / "config" / "config.toml").write_text('approve = "ask"\n')
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start([str(CAVE), "--model", f"scripted:{script}"], width=120, height=40)
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")  # the runtime is up
    folder = SessionStore(tmp_path / "sessions").resolve("last")
    tmux.keys("-l", WIDE_CELL)
    tmux.wait_for(f"│ {WIDE_CELL}")  # typed into the input
    tmux.keys("Enter")
    tmux.wait_for("[3 rows x 30 columns]")
    tmux.keys("-l", "add up the wide table")
    tmux.wait_for("│ add up the wide table")
    tmux.keys("Enter")
    tmux.wait_for(APPROVAL_HINT)  # step 1: edit it (`offset` is not defined yet)
    tmux.answer("C-e")
    tmux.wait_for("Edit the code, then Run")
    tmux.keys("-l", "offset = 1000")
    tmux.keys("Enter")
    tmux.wait_for("offset = 1000")
    tmux.keys("C-r")
    _wait_record(folder, lambda r: r["type"] == "execution_output" and r.get("step") == 1)
    tmux.wait_for("Step 2: run this code?")  # skip it (not step 1's dialog, still drawn)
    tmux.answer("Escape")
    _wait_record(folder, lambda r: r.get("kind") == "code_skipped")
    # final_answer, run as written. Step 3's own dialog: step 2's can still be on screen
    # when the skip is recorded, and an answer sent within ANSWER_GRACE of the new one
    # opening is dropped as typed too soon.
    tmux.wait_for("Step 3: run this code?")
    tmux.answer("C-r")
    tmux.wait_for("The total is 1090.")
    tmux.keys("-l", "!print(total * 2)")
    tmux.wait_for("│ !print(total * 2)")
    tmux.keys("Enter")
    tmux.wait_for("2180")
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
    return folder


def test_a_session_recorded_in_the_app_replays_without_divergence(tmux, tmp_path):
    folder = _record_in_the_app(tmux, tmp_path)
    (turn,), trailing = recorded_turns(read_session(folder))
    assert [type(item) for item in turn.setup] == [UserCell]
    assert [s.run for s in turn.ordered] == [StepRun.EDITED, StepRun.SKIPPED, StepRun.AS_WRITTEN]
    assert turn.answer["content"] == "The total is 1090." and turn.status == "completed"
    assert [cell.outcome["output"] for cell in trailing] == ["2180\n"]

    # stdout redirected: no terminal at all
    env = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES")}
    env["CAVE_CONFIG_DIR"] = str(tmp_path / "config")
    done = subprocess.run(
        [str(CAVE), "replay", "last", "--headless", "--check"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches the recording: 1 turns, 2 steps, 2 user cells, 5 outputs" in " ".join(
        done.stdout.split()
    )

    # a 120-column terminal
    terminal = Tmux(tmp_path)
    try:
        terminal.start([str(CAVE), "replay", "last", "--headless", "--check"], width=120)
        screen = terminal.wait_for("CAVE-EXIT=", timeout=120)
        assert "CAVE-EXIT=0" in screen and "matches the recording" in screen, screen
    finally:
        terminal.kill()


@pytest.fixture
def tmux(tmp_path: Path):
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.kill()
