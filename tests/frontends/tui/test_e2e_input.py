"""Every slash command of README.md and docs/tui.md typed into the real `cave` in tmux.

Each line is sent the way people use a terminal: as one write with its Enter (a paste
or a burst of fast typing), and key by key at 5 ms a key; at 120x40 and at 80x24. The
input history file records each line as the app took it, so the test compares what was
sent with what was received, exactly, in order.
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from cave_tui.app.history import read_history

from .test_e2e_tmux import CAVE, Tmux, tmux  # noqa: F401 (the fixture)

pytestmark = [pytest.mark.e2e]

PENGUINS = "species,mass\nAdelie,3700\nGentoo,5076\nChinstrap,3733\n"
AIRLINES = "carrier,name\nAA,American\nUA,United\n"
BLOCK = "!a = 1\nb = a + 1\nprint('sum is', a + b)"

# (line, key that answers the screen the line opens, text that shows that screen)
LINES: list[tuple[str, str | None, str | None]] = [
    ("/help", None, None),
    ("/help vars", None, None),
    ("/vars", None, None),
    ("/vars pen", None, None),
    ("/approve", None, None),
    ("/approve ask", None, None),
    ("/approve auto", None, None),
    ("/policy", None, None),
    ("/policy standard", None, None),
    ("/theme", None, None),
    ("/theme cave-light", None, None),
    ("/theme cave-dark", None, None),
    ("/model", None, None),
    ("/config", None, None),
    ("/cost", None, None),
    ("/skills", None, None),
    ("/skill no-such-skill", None, None),
    ("/compact", None, None),
    ("/inject airlines.csv as b2", None, None),
    ("/retrieve b2 b2.csv", None, None),
    ("/show b2", "Escape", "Insert name"),
    ("/del b2", None, None),
    ("/dump out", None, None),
    ("/sessions", None, None),
    ("/export session.ipynb", None, None),
    ("/save snapshot one", None, None),
    ("/clear", None, None),
    ("!print('hello world number 4')", None, None),
    ("/reset", "y", "Reset?"),
]


class Typist:
    """Sends lines to the app in tmux and waits until the app took each one."""

    def __init__(self, pane: Tmux, history: Path, per_key: float | None) -> None:
        self.tmux = pane
        self.history = history
        self.per_key = per_key  # None: one write per line
        self.sent: list[str] = []

    def taken(self) -> list[str]:
        return read_history(self.history) if self.history.exists() else []

    def line(self, text: str) -> None:
        if self.per_key is None:
            self.tmux.keys("-l", text + "\r")  # the line and its Enter in one write
        else:
            for char in text:
                self.tmux.keys("-l", char)
                time.sleep(self.per_key)
            self.tmux.keys("Enter")
        self.sent.append(text)
        self.wait_taken()

    def paste(self, text: str) -> None:
        """A bracketed paste of *text* (several lines), then Enter right after."""
        self.tmux.run("set-buffer", "--", text)
        self.tmux.run("paste-buffer", "-p", "-d")
        self.tmux.keys("Enter")
        self.sent.append(text)
        self.wait_taken()

    def wait_taken(self, timeout: float = 20.0) -> None:
        deadline = time.monotonic() + timeout
        while len(self.taken()) < len(self.sent):
            if time.monotonic() > deadline:
                raise AssertionError(
                    f"sent {self.sent[len(self.taken()) :]!r}, not taken; the screen:\n"
                    + self.tmux.screen()
                )
            time.sleep(0.05)  # polling the history file, with a deadline


def _wait_gone(pane: Tmux, text: str, timeout: float = 20.0) -> None:
    deadline = time.monotonic() + timeout
    while text in pane.screen():
        assert time.monotonic() < deadline, f"{text!r} stayed on the screen"
        time.sleep(0.05)  # polling the screen, with a deadline


def _wait_started(pane: Tmux, timeout: float = 20.0) -> None:
    """Until the `cave` process runs in the pane (the user typed `cave` and Enter)."""
    import subprocess

    pid = pane.run("display-message", "-p", "#{pane_pid}").strip()
    deadline = time.monotonic() + timeout
    while not subprocess.run(["pgrep", "-P", pid], capture_output=True).stdout.strip():
        assert time.monotonic() < deadline, "cave did not start"
        time.sleep(0.01)
    time.sleep(0.3)  # a person starts typing a moment later; the app is still loading


def _start(pane: Tmux, tmp_path: Path, width: int, height: int) -> Path:
    (tmp_path / "penguins.csv").write_text(PENGUINS)
    (tmp_path / "airlines.csv").write_text(AIRLINES)
    script = tmp_path / "replies.yaml"
    script.write_text('- "Nothing to do."\n')
    pane.start(
        [str(CAVE), "--model", f"scripted:{script}", "--inject", "penguins.csv"],
        width=width,
        height=height,
    )
    return tmp_path / "data" / "history"


@pytest.mark.parametrize("per_key", [None, 0.005], ids=["paste", "5ms-keys"])
@pytest.mark.parametrize("size", [(120, 40), (80, 24)], ids=["120x40", "80x24"])
def test_every_documented_command_is_taken_exactly_as_sent(tmux, tmp_path, size, per_key):  # noqa: F811
    history = _start(tmux, tmp_path, *size)
    tmux.wait_for("Recording session", timeout=60)  # the runtime is up, the data injected
    typist = Typist(tmux, history, per_key)
    for line, answer, shows in LINES:
        typist.line(line)
        if answer is not None:  # a dialog: answer it; the next line follows at once
            assert shows is not None
            tmux.wait_for(shows)
            tmux.answer(answer)
            if answer == "Escape":  # ESC then a byte at once reads as Alt+key in a terminal:
                _wait_gone(tmux, shows)  # a person sees the dialog close, then types
    typist.paste(BLOCK)
    tmux.wait_for("sum is 3")
    typist.line("/quit")
    tmux.wait_for("CAVE-EXIT=0")
    assert typist.taken() == typist.sent
    assert (tmp_path / "b2.csv").read_text().startswith("carrier,name")
    assert (tmp_path / "out" / "manifest.json").exists()
    assert (tmp_path / "session.ipynb").exists()


def test_lines_typed_while_the_app_starts_are_kept(tmux, tmp_path):  # noqa: F811
    history = _start(tmux, tmp_path, 120, 40)
    _wait_started(tmux)
    typist = Typist(tmux, history, None)
    typist.sent = ["!early = 1", "!later = early + 1"]
    for text in typist.sent:
        tmux.keys("-l", text + "\r")  # at once, while the app loads: nothing drawn yet
    typist.wait_taken(timeout=60)
    assert typist.taken() == typist.sent
    typist.line("!print('later is', later)")
    tmux.wait_for("later is 2")
