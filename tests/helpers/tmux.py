"""A terminal program in tmux, driven as a person drives it: keys, pastes, the screen read."""

from __future__ import annotations

import shlex
import subprocess
import time
import uuid
from pathlib import Path

from cave_tui.frontends.tui.screens.base import ANSWER_GRACE


class Tmux:
    """One tmux server on its own socket, killed at the end whatever happens."""

    def __init__(self, tmp: Path) -> None:
        self.socket = f"cave-e2e-{uuid.uuid4().hex[:8]}"
        self.tmp = tmp

    def run(self, *args: str) -> str:
        return subprocess.run(
            ["tmux", "-L", self.socket, *args], capture_output=True, text=True, check=True
        ).stdout

    def start(
        self,
        command: list[str],
        width: int = 120,
        height: int = 40,
        env: dict[str, str] | None = None,
    ) -> None:
        """Run *command* in tmp (cave's config and data dirs there, plus *env*) in a
        width x height pane; `CAVE-EXIT=N` is shown when it exits."""
        variables = {
            "TERM": "xterm-256color",
            "CAVE_CONFIG_DIR": str(self.tmp / "config"),
            "CAVE_DATA_DIR": str(self.tmp / "data"),
            "LITELLM_LOCAL_MODEL_COST_MAP": "True",
            **(env or {}),
        }
        exports = " ".join(f"{k}={shlex.quote(v)}" for k, v in variables.items())
        # COLUMNS/LINES from the test process would override the pane's real size.
        shell = (
            f"cd {self.tmp} && env -u COLUMNS -u LINES {exports} {' '.join(command)}; "
            "echo CAVE-EXIT=$?; sleep 30"
        )
        self.run("new-session", "-d", "-x", str(width), "-y", str(height), shell)

    def screen(self) -> str:
        return self.run("capture-pane", "-p")

    def wait_for(self, text: str, timeout: float = 30.0) -> str:
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text in screen:
                return screen
            time.sleep(0.1)  # polling the screen, with a deadline
        raise AssertionError(f"{text!r} did not appear; the screen was:\n{screen}")

    def wait_gone(self, text: str, timeout: float = 30.0) -> str:
        """The screen once *text* is no longer on it."""
        deadline = time.monotonic() + timeout
        screen = ""
        while time.monotonic() < deadline:
            screen = self.screen()
            if text not in screen:
                return screen
            time.sleep(0.1)  # polling the screen, with a deadline
        raise AssertionError(f"{text!r} stayed on the screen:\n{screen}")

    def keys(self, *keys: str) -> None:
        self.run("send-keys", *keys)

    def paste(self, text: str) -> None:
        """Paste *text* as a terminal pastes it: whole, in bracketed-paste markers when the
        program asked for them."""
        self.run("set-buffer", "--", text)
        self.run("paste-buffer", "-p", "-d")

    def answer(self, *keys: str) -> None:
        """Answer the dialog on screen as a person does, once it has been there a moment:
        an answer key sooner is taken as typing (cave_tui/frontends/tui/screens/base.py)."""
        time.sleep(ANSWER_GRACE)
        self.keys(*keys)

    def kill(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)
