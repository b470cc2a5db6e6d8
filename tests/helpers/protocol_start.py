"""A protocol front end (`cave mcp`, `cave acp`) spawned for real with `--kernel`, and the
kernel processes it leaves: found by their working folder, so one reparented to init after
its parent ended is still found."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import psutil

from tests.helpers.paths import REPO_ROOT

DEADLINE = 60.0  # seconds: a hang guard on a loaded machine, not a speed figure


def kernels_in(folder: Path) -> list[psutil.Process]:
    """The kernel processes (the launcher and the ipykernel) working in *folder*."""
    found = []
    for process in psutil.process_iter(["cmdline", "cwd"]):
        command = " ".join(process.info["cmdline"] or [])
        if process.info["cwd"] == str(folder) and ("kernelapp" in command or "launcher" in command):
            found.append(process)
    return found


def spawn(
    folder: Path,
    command: str,
    *,
    pythonpath: tuple[Path, ...] = (),
    runtime: str = "--kernel",
    stdin: int = subprocess.PIPE,
) -> subprocess.Popen[bytes]:
    """`cave COMMAND RUNTIME` working in *folder* (stdin a pipe unless given; stderr to
    folder/stderr.txt); *pythonpath* goes before this checkout."""
    env = dict(os.environ)
    paths = [*map(str, pythonpath), str(REPO_ROOT), env.get("PYTHONPATH")]
    env["PYTHONPATH"] = os.pathsep.join(filter(None, paths))
    env["PYTHONFAULTHANDLER"] = "1"  # a stalled start's stacks on SIGABRT, for its test
    return subprocess.Popen(
        [
            sys.executable,
            "-m",
            "cave_tui",
            command,
            runtime,
            "--sessions-dir",
            str(folder / "s"),
        ],
        stdin=stdin,
        stdout=subprocess.DEVNULL,
        stderr=(folder / "stderr.txt").open("wb"),
        env=env,
        cwd=folder,
        # Ctrl+C as from a terminal: an xdist worker ignores SIGINT, and its children would
        # inherit that (a signal sent once the start is over would then be ignored)
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def wait_for_kernel(process: subprocess.Popen[bytes], folder: Path) -> None:
    """Until the kernel of *process* is spawned (its start under way)."""
    deadline = time.monotonic() + DEADLINE
    while not kernels_in(folder):
        assert process.poll() is None, (folder / "stderr.txt").read_text()
        assert time.monotonic() < deadline, "no kernel was started"
        time.sleep(0.02)


def no_kernel_left(folder: Path) -> bool:
    """True once no kernel process works in *folder* (waiting a little for one that ends)."""
    deadline = time.monotonic() + 10
    while kernels_in(folder):
        if time.monotonic() > deadline:
            return False
        time.sleep(0.05)
    return True


def start_with_a_broken_sdk(tmp_path: Path, command: str) -> tuple[int, str]:
    """`cave COMMAND --kernel` whose protocol SDK (the package named *command*) raises on
    import: its exit code and what it said on stderr."""
    broken = tmp_path / "broken"
    (broken / command).mkdir(parents=True)
    (broken / command / "__init__.py").write_text(
        f"raise ImportError('this {command} is broken')\n"
    )
    process = spawn(tmp_path, command, pythonpath=(broken,))
    try:
        code = process.wait(timeout=DEADLINE)
    finally:
        if process.poll() is None:
            process.kill()
    return code, (tmp_path / "stderr.txt").read_text()
