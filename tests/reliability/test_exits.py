"""Ctrl+C, Ctrl+Q and SIGTERM always end cave, restore the terminal and close the session
record, even while it is stuck saving a value whose `__getstate__` never returns (issue 29,
items 5 and 6): a second quit request leaves at once and says what was not written."""

from __future__ import annotations

import json
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.reliability.real_cave import CAVE, code, env, script

# Its digest is cut short by its size (10 MB), so the write itself hangs: the value cave
# is stuck on until the write limit (60 s) stops it.
HEAVY = """
class Sticky:
    def __getstate__(self):
        while True:
            pass
heavy = [bytearray(10 << 20), Sticky()]
"""


def _meta(sessions: Path) -> dict[str, object]:
    (folder,) = [p for p in sessions.iterdir() if p.is_dir()]
    return json.loads((folder / "meta.json").read_text())


def _events(sessions: Path) -> str:
    found = list(sessions.glob("*/events.jsonl"))
    return found[0].read_text() if found else ""


def _stuck_run(tmp_path: Path, *flags: str) -> subprocess.Popen[str]:
    """`cave run` with --dump, stuck in the snapshot after the step that binds `heavy`."""
    model = script(tmp_path / "m.yaml", [code("x = 41"), code(HEAVY), code("y = 5"), "done"])
    child = subprocess.Popen(
        [CAVE, "run", "go", "--model", model, "--policy", "trusted", "--sessions-dir", "s",
         "--dump", "out", *flags],
        cwd=tmp_path, env=env(tmp_path), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
        # Ctrl+C as a terminal sends it: a test worker may run with SIGINT ignored, and an
        # ignored disposition is inherited (the run then never saw either Ctrl+C).
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    deadline = time.monotonic() + 60
    # The cell binding `heavy` has run (its outcome is recorded): the snapshot after its step
    # is what reads `heavy` next. Waiting for its code alone raced a loaded machine: both
    # Ctrl+C could land before the snapshot, and the exit's dump then hung on `heavy`.
    while '"changed":["Sticky","heavy"]' not in _events(tmp_path / "s").replace(" ", ""):
        assert child.poll() is None and time.monotonic() < deadline, child.communicate()
        time.sleep(0.1)
    time.sleep(2)  # into the snapshot's write of `heavy`
    assert child.poll() is None
    return child


def _ask_twice(child: subprocess.Popen[str], sig: signal.Signals) -> tuple[float, str]:
    started = time.monotonic()
    child.send_signal(sig)
    time.sleep(0.5)
    child.send_signal(sig)
    try:
        _, err = child.communicate(timeout=60)
    except subprocess.TimeoutExpired:
        child.kill()
        out, err = child.communicate()
        said = f"{err[-3000:]}\n{out[-2000:]}"
        raise AssertionError(f"cave did not leave within 60 s:\n{said}") from None
    return time.monotonic() - started, err


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT])
def test_asked_twice_while_stuck_saving_cave_run_leaves_at_once(tmp_path, sig):
    child = _stuck_run(tmp_path, "--in-process")
    took, err = _ask_twice(child, sig)
    assert took <= 10, (took, err)  # about 1 s on 2 loaded cores
    assert child.returncode == 128 + sig, err
    assert "left at once" in err and "the dump to out was not written" in err, err
    assert "Traceback" not in err
    assert _meta(tmp_path / "s")["status"] != "running"
    assert not (tmp_path / "out").exists()


def test_asked_twice_while_the_kernel_is_stuck_saving(tmp_path):
    child = _stuck_run(tmp_path, "--kernel")
    took, err = _ask_twice(child, signal.SIGINT)
    assert took <= 10, (took, err)
    # The first Ctrl+C may already have ended the run (2); the second then lands as it
    # leaves (130), or after its handlers are gone, as the interpreter ends (-SIGINT).
    assert child.returncode in (2, 130, -signal.SIGINT), err
    assert "not written" in err and "Traceback" not in err, err
    assert _meta(tmp_path / "s")["status"] != "running"
