"""The real `cave` command in tmux: type a task, wait for the answer, read the screen."""

from __future__ import annotations

# ruff: noqa: E501 (the scripted replies are one line each)
import json
import os
import shutil
import subprocess
import sys
import time
from pathlib import Path

import pytest

from tests.helpers.paths import REPO_ROOT
from tests.helpers.tmux import Tmux

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

CAVE = Path(sys.executable).with_name("cave")
REPLIES = """\
- "Building it now.\\n\\n```python\\nimport pandas as pd\\npenguin_mass = pd.DataFrame({'species': ['Adelie', 'Gentoo'], 'mass': [3700, 5076]})\\n```"
- "Done: **penguin_mass** holds two rows."
"""


@pytest.fixture
def tmux(tmp_path: Path):
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.kill()


def test_app_answers_and_the_inspector_shows_the_new_variable(tmux, tmp_path):
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start([str(CAVE), "--model", f"scripted:{script}"])
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")  # the runtime is up
    tmux.keys("-l", "make a penguin table")
    tmux.wait_for("│ make a penguin table")  # typed into the input
    tmux.keys("Enter")
    screen = tmux.wait_for("holds two rows.")
    inspector = [line for line in screen.splitlines() if "penguin_mass" in line]
    assert any("DataFrame" in line and "2x2" in line for line in inspector), screen
    assert "step 1 · agent · ok" in screen
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
    history = (tmp_path / "data" / "history").read_text()
    assert "+make a penguin table" in history


def test_plain_repl_runs_a_task_and_a_command(tmux, tmp_path):
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start([str(CAVE), "--plain", "--model", f"scripted:{script}"], width=100, height=40)
    tmux.wait_for("cave›")
    tmux.keys("-l", "make a penguin table")
    tmux.wait_for("cave› make a penguin table")
    tmux.keys("Enter")
    tmux.wait_for("holds two rows.")
    tmux.keys("-l", "/vars")
    tmux.wait_for("cave› /vars")
    tmux.keys("Enter")
    screen = tmux.wait_for("penguin_mass")
    assert "DataFrame" in screen
    _quit_at_the_prompt(tmux)


def test_plain_repl_keeps_a_line_typed_during_a_turn_for_the_next_prompt(tmux, tmp_path):
    """A line pasted while the turn runs is not echoed into the output: it waits, and
    appears after the next prompt, whole and editable."""
    script = tmp_path / "replies.yaml"
    script.write_text(
        '- "Working.\\n\\n```python\\nimport time\\ntime.sleep(3)\\nslept = 1\\n```"\n'
        '- "Done: **slept** is set."\n'
    )
    tmux.start([str(CAVE), "--plain", "--model", f"scripted:{script}"], width=100, height=40)
    tmux.wait_for("cave›")
    tmux.keys("-l", "sleep a little")
    tmux.keys("Enter")
    tmux.wait_for("time.sleep(3)")
    tmux.keys("-l", "/vars")
    screen = tmux.wait_for("cave› /vars")
    assert "Done: slept is set." in screen
    assert not any(line.startswith("/vars") for line in screen.splitlines()), screen
    tmux.keys("Enter")
    assert "int" in tmux.wait_for("slept  ")
    _quit_at_the_prompt(tmux)


def test_plain_repl_does_not_echo_a_line_pasted_before_its_first_prompt(tmux, tmp_path):
    """Typed ahead while the kernel starts: not echoed, then at the prompt, whole. Echo is
    off from the banner on, so no gap opens before a prompt (as after a turn)."""
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start(
        [str(CAVE), "--plain", "--kernel", "--model", f"scripted:{script}"], width=100, height=40
    )
    tmux.wait_for("cave --plain ·")
    tmux.keys("-l", "/vars")  # the kernel takes a second or more to start
    screen = tmux.wait_for("cave› /vars")
    assert not any(line.startswith("/vars") for line in screen.splitlines()), screen
    tmux.keys("Enter")
    tmux.wait_for("No variables yet.")
    _quit_at_the_prompt(tmux)


def _quit_at_the_prompt(tmux: Tmux) -> None:
    """Ctrl+D only means "quit" at a prompt: wait for the next one first."""
    deadline = time.monotonic() + 10
    while tmux.screen().rstrip().splitlines()[-1].strip() != "cave›":
        assert time.monotonic() < deadline, tmux.screen()
        time.sleep(0.1)
    time.sleep(0.3)  # drawn, then read: prompt_toolkit reads keys a moment after drawing
    tmux.keys("C-d")
    tmux.wait_for("CAVE-EXIT=0")


def test_sigterm_quits_through_the_exit_path(tmux, tmp_path):
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start([str(CAVE), "--model", f"scripted:{script}"])
    tmux.wait_for("Ask cave")
    pid = tmux.run("display-message", "-p", "#{pane_pid}").strip()
    children = subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split()
    assert children, "cave is not running"
    os.kill(int(children[0]), 15)
    tmux.wait_for("CAVE-EXIT=0")


def test_closing_the_terminal_ends_cave_with_its_session_closed(tmux, tmp_path):
    """SIGHUP (the terminal window closed): the exit path runs and the process ends, although
    the terminal it would restore is gone."""
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start([str(CAVE), "--model", f"scripted:{script}", "--sessions-dir", "s"])
    tmux.wait_for("Ask cave")
    tmux.wait_for("ipython")
    pid = tmux.run("display-message", "-p", "#{pane_pid}").strip()
    (cave,) = subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split()
    tmux.kill()  # the terminal goes away: SIGHUP
    deadline = time.monotonic() + 20
    while _alive(int(cave)) and time.monotonic() < deadline:
        time.sleep(0.1)
    assert not _alive(int(cave)), "cave outlived its terminal"
    (folder,) = (tmp_path / "s").iterdir()
    assert json.loads((folder / "meta.json").read_text())["status"] == "terminated"


def _alive(pid: int) -> bool:
    try:
        with open(f"/proc/{pid}/stat") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except FileNotFoundError:
        return False


def _cave_module() -> list[str]:
    """`cave` from this checkout (the module entry point, importable via PYTHONPATH)."""
    root = REPO_ROOT
    return ["env", f"PYTHONPATH={root}", sys.executable, "-m", "cave_tui"]


def test_cave_demo_replays_in_the_app_without_a_key(tmux, tmp_path):
    tmux.start([*_cave_module(), "demo", "--speed", "20"], width=140, height=50)
    screen = tmux.wait_for("matches the recording", timeout=90)
    inspector = [line for line in screen.splitlines() if "flights" in line and "DataFrame" in line]
    assert inspector, screen
    assert "No model is configured" in screen or "data is live" in screen, screen
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")


def test_sigterm_dumps_and_closes_the_recorded_session(tmux, tmp_path):
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    sessions, out = tmp_path / "rec", tmp_path / "out"
    tmux.start(
        [
            *_cave_module(),
            "--model",
            f"scripted:{script}",
            "--dump",
            str(out),
            "--sessions-dir",
            str(sessions),
        ]
    )
    tmux.wait_for("ipython")
    tmux.keys("-l", "make a penguin table")
    tmux.wait_for("│ make a penguin table")
    tmux.keys("Enter")
    tmux.wait_for("holds two rows.")
    pid = tmux.run("display-message", "-p", "#{pane_pid}").strip()
    children = subprocess.run(["pgrep", "-P", pid], capture_output=True, text=True).stdout.split()
    os.kill(int(children[0]), 15)
    tmux.wait_for("CAVE-EXIT=0")
    assert "penguin_mass" in (out / "manifest.json").read_text()
    (folder,) = [p for p in sessions.iterdir() if p.is_dir()]
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == "terminated" and meta["turns"] == 1


def _recorded_session(tmp_path: Path) -> str:
    """A finished session in ./sessions made by a real `cave run`; its id."""
    script = tmp_path / "first.yaml"
    script.write_text(
        "- \"```python\\nkept = 'old' + 'ie'\\nprint(kept)\\n```\"\n- \"Made **kept**.\"\n"
    )
    result = subprocess.run(
        [str(CAVE), "run", "make kept", "--model", f"scripted:{script}", "--json"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
        env={**os.environ, "CAVE_CONFIG_DIR": str(tmp_path / "config")},
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    (folder,) = (tmp_path / "sessions").iterdir()
    return folder.name


def test_load_in_the_app_resumes_another_session(tmux, tmp_path):
    other = _recorded_session(tmp_path)
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start([str(CAVE), "--model", f"scripted:{script}"])
    tmux.wait_for("Recording session")
    tmux.keys("-l", f"/load {other}")  # pasted, Enter right behind it
    tmux.keys("Enter")
    tmux.wait_for("Replace the current conversation")
    tmux.answer("y")
    screen = tmux.wait_for(f"resumed session {other}")
    assert "make kept" in screen  # the loaded conversation is drawn
    assert "cannot" not in screen and "not available" not in screen
    tmux.keys("-l", "!print(kept.upper())")
    tmux.keys("Enter")
    tmux.wait_for("OLDIE")
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")


def test_load_in_plain_mode_resumes_another_session(tmux, tmp_path):
    other = _recorded_session(tmp_path)
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start([str(CAVE), "--plain", "--model", f"scripted:{script}"], width=100, height=40)
    tmux.wait_for("cave›")
    tmux.keys("-l", f"/load {other}")
    tmux.keys("Enter")
    tmux.wait_for("[y/N]")
    tmux.keys("-l", "y")
    tmux.keys("Enter")
    screen = tmux.wait_for(f"resumed session {other}")
    assert "make kept" in screen
    assert "cannot" not in screen and "not available" not in screen
    tmux.keys("-l", "!print(kept.upper())")
    tmux.keys("Enter")
    tmux.wait_for("OLDIE")
    tmux.keys("C-d")
    tmux.wait_for("CAVE-EXIT=0")
