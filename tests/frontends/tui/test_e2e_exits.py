"""The real app in tmux, stuck saving a value whose `__getstate__` never returns (issue 29,
items 5 and 6): quitting again (Ctrl+Q, Ctrl+C, SIGTERM) leaves within seconds, the terminal
is restored (main screen, echo on) and the session record is closed."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.frontends.tui.test_e2e_tmux import CAVE, Tmux
from tests.reliability.real_cave import code, script
from tests.reliability.test_exits import HEAVY

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]


@pytest.fixture
def tmux(tmp_path: Path):
    session = Tmux(tmp_path)
    try:
        yield session
    finally:
        session.kill()


def _start(tmux: Tmux, tmp: Path, *flags: str) -> None:
    """The app, then (once it has left) its exit code and the terminal's echo setting."""
    model = script(tmp / "m.yaml", [code("x = 41"), code(HEAVY), code("y = 5"), "done"])
    exports = f"CAVE_CONFIG_DIR={tmp / 'config'} CAVE_DATA_DIR={tmp / 'data'} CAVE_LOCAL_MODEL=off"
    cave = f"{CAVE} --model {model} --policy trusted --sessions-dir s --dump out {' '.join(flags)}"
    shell = (
        f"cd {tmp} && env -u COLUMNS -u LINES TERM=xterm-256color {exports} {cave}; "
        "echo CAVE-EXIT=$?; stty -a | tr ' ' '\\n' | grep -x -e echo -e -echo; echo STTY-SHOWN; "
        "sleep 30"
    )
    tmux.run("new-session", "-d", "-x", "120", "-y", "40", shell)


def _stuck(tmux: Tmux, tmp: Path) -> None:
    tmux.wait_for("Ask cave", timeout=60)
    tmux.keys("go", "Enter")
    deadline = time.monotonic() + 60
    while not any("heavy = [" in p.read_text() for p in (tmp / "s").glob("*/events.jsonl")):
        assert time.monotonic() < deadline, tmux.screen()
        time.sleep(0.1)
    time.sleep(2)  # into the snapshot's write of `heavy`


def _left(tmux: Tmux, tmp: Path, started: float) -> float:
    tmux.wait_for("CAVE-EXIT=", timeout=60)
    took = time.monotonic() - started
    screen = tmux.wait_for("STTY-SHOWN", timeout=30)  # the terminal's settings, printed after
    assert tmux.run("display", "-p", "#{alternate_on}").strip() == "0"  # the main screen
    assert "\necho\n" in f"\n{screen.strip()}\n".replace(" ", "\n"), screen  # echo on
    (folder,) = [p for p in (tmp / "s").iterdir() if p.is_dir()]
    assert json.loads((folder / "meta.json").read_text())["status"] != "running"
    said = " ".join(screen.split())  # the exit message, as the pane wrapped it
    assert "left at once" in said and "the dump to out was not written" in said, screen
    assert not (tmp / "out").exists()
    return took


@pytest.mark.parametrize("keys", [("C-q", "C-q"), ("C-c", "C-c", "C-c")])
def test_quitting_again_while_stuck_saving_leaves_with_the_terminal_restored(tmux, tmp_path, keys):
    _start(tmux, tmp_path, "--in-process")
    _stuck(tmux, tmp_path)
    started = time.monotonic()
    for key in keys:  # Ctrl+C: interrupt, quit, leave now
        tmux.keys(key)
        time.sleep(0.3)
    took = _left(tmux, tmp_path, started)
    print(f"left {took:.1f} s after the first key")
    assert took <= 10, took  # about 1-2 s on 2 loaded cores


def test_sigterm_twice_while_the_kernel_is_stuck_saving(tmux, tmp_path):
    _start(tmux, tmp_path, "--kernel")
    _stuck(tmux, tmp_path)
    pid = int(tmux.run("display", "-p", "#{pane_pid}").strip())
    children = subprocess.run(["pgrep", "-P", str(pid)], capture_output=True, text=True)
    (app_pid,) = [
        int(p) for p in children.stdout.split() if "cave" in Path(f"/proc/{p}/cmdline").read_text()
    ]
    started = time.monotonic()
    os.kill(app_pid, signal.SIGTERM)
    time.sleep(0.5)
    os.kill(app_pid, signal.SIGTERM)
    took = _left(tmux, tmp_path, started)
    print(f"left {took:.1f} s after the first SIGTERM")
    assert took <= 10, took


@pytest.mark.parametrize("plain", [False, True], ids=["app", "plain"])
def test_the_exit_says_the_exact_line_that_resumes_the_session(tmux, tmp_path, plain):
    """Issue 34, item 5: after the app (or --plain) closes, the terminal shows
    `cave --resume ID` for the session just recorded, titled by its first request."""
    model = script(tmp_path / "m.yaml", [code("n = 7"), "done"])
    cave = [CAVE, "--model", model, "--in-process", *(["--plain"] if plain else [])]
    tmux.start([str(part) for part in cave], width=100, height=30)
    tmux.wait_for("cave›" if plain else "Ask cave", timeout=60)
    tmux.keys("-l", "Count the birds")
    tmux.keys("Enter")
    tmux.wait_for("done", timeout=60)
    tmux.keys("-l", "/quit")
    tmux.keys("Enter")
    screen = tmux.wait_for("CAVE-EXIT=0", timeout=60)
    (folder,) = (tmp_path / "sessions").iterdir()
    assert f"cave: resume this session with: cave --resume {folder.name}" in screen, screen
    assert json.loads((folder / "meta.json").read_text())["title"] == "Count the birds"
