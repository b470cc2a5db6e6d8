"""Issue 18, item 13: bad input and interruptions at the real front ends (`cave run`,
`cave --plain`, `cave`): names in `--inject`, text files that are not UTF-8, `--max-steps`
out of range, Ctrl+C during a start-up load, a kernel restart between turns."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time

import psutil
import pytest

from tests.reliability.real_cave import CAVE, cave, code, script


def test_inject_names_are_checked_as_names(tmp_path):
    (tmp_path / "f.csv").write_text("a\n1\n")
    model = script(tmp_path / "m.yaml", ["hi"])
    done = cave("run", "t", "--model", model, "--inject", "f.csv:1x", cwd=tmp_path)
    assert done.returncode == 2
    assert "invalid name" in done.stderr and "'1x' is not a valid Python name" in done.stderr
    assert "no such file" not in done.stderr
    done = cave("run", "t", "--model", model, "--inject", "f.csv:final_answer", cwd=tmp_path)
    assert done.returncode == 2
    assert "'final_answer' is reserved" in done.stderr and "ends its turn" in done.stderr
    assert not (tmp_path / "sessions").exists()


def test_a_cp1252_csv_is_injected_read_as_cp1252(tmp_path):
    (tmp_path / "people.csv").write_bytes("name,city\nJosé,Zürich\n".encode("cp1252"))
    model = script(tmp_path / "m.yaml", [code("print(people.city[0])"), "Zürich"])
    done = cave("run", "t", "--model", model, "--inject", "people.csv", "--json", cwd=tmp_path)
    assert done.returncode == 0, done.stderr  # it was refused as binary data
    events = [json.loads(line) for line in done.stdout.splitlines()]
    assert any(e.get("output") == "Zürich\n" for e in events)
    assert any("read as cp1252" in e.get("content", "") for e in events)


@pytest.mark.parametrize(
    "front_end, steps",
    [(["run", "t"], "0"), (["run", "t"], "-1"), (["--plain"], "0"), ([], "-1")],
    ids=["run-0", "run-negative", "plain", "app"],
)
def test_max_steps_below_one_is_refused(tmp_path, front_end, steps):
    model = script(tmp_path / "m.yaml", ["hi"])
    done = cave(*front_end, "--model", model, "--max-steps", steps, cwd=tmp_path)
    assert done.returncode == 2, done.stderr
    assert "--max-steps" in done.stderr and f"at least 1, not {steps}" in done.stderr
    assert not (tmp_path / "sessions").exists()


# A data set whose import waits: the start-up is busy loading it when Ctrl+C comes.
SLOW_PACKAGE = """\
import pathlib, time
here = pathlib.Path(__file__).parent
(here / "import-started").touch()
for _ in range(600):
    if (here / "release").exists():
        break
    time.sleep(0.05)
data = [1, 2, 3]
"""


@pytest.mark.parametrize("front_end", [["run", "t"], ["--plain"]], ids=["run", "plain"])
def test_ctrl_c_during_a_start_up_load_says_what_stopped(tmp_path, front_end):
    (tmp_path / "slowdata.py").write_text(SLOW_PACKAGE)
    model = script(tmp_path / "m.yaml", ["hi"])
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(tmp_path), *sys.path])}
    proc = subprocess.Popen(
        [CAVE, *front_end, "--model", model, "--inject", "pkg:slowdata.data"],
        cwd=tmp_path, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, text=True,
        # Ctrl+C as a terminal delivers it, even when this runs where SIGINT is ignored
        # (a job started with nohup ... &): an ignored SIGINT is inherited by the child.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not (tmp_path / "import-started").exists():
            assert proc.poll() is None and time.monotonic() < deadline, proc.stderr
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        time.sleep(0.3)
        (tmp_path / "release").touch()
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130
    assert "interrupted while loading --inject pkg:slowdata.data; nothing started" in err
    assert "Traceback" not in err
    assert not (tmp_path / "sessions").exists()


def test_plain_tells_the_user_the_kernel_restarted_between_turns(tmp_path):
    model = script(
        tmp_path / "m.yaml",
        [code("kept = 5\nprint('kept', kept)"), "noted", code("print(kept + 1)"), "six"],
    )
    proc = subprocess.Popen(
        [CAVE, "--plain", "--kernel", "--model", model],
        cwd=tmp_path, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        text=True,
    )  # fmt: skip
    lines: list[str] = []
    reader = threading.Thread(target=lambda: lines.extend(proc.stdout or []), daemon=True)
    assert proc.stdin is not None
    try:
        reader.start()
        proc.stdin.write("first\n")
        proc.stdin.flush()
        deadline = time.monotonic() + 60
        while not any("noted" in line for line in lines):
            assert proc.poll() is None and time.monotonic() < deadline, lines
            time.sleep(0.05)
        kernels = [
            p
            for p in psutil.Process(proc.pid).children(recursive=True)
            if "kernelapp" in " ".join(p.cmdline()) and "launcher" not in " ".join(p.cmdline())
        ]
        assert len(kernels) == 1
        kernels[0].kill()  # dies while idle, between the turns
        kernels[0].wait(10)
        time.sleep(1.5)  # the runtime notices and restarts it
        proc.stdin.write("second\n/quit\n")
        proc.stdin.flush()
        proc.wait(60)
        reader.join(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    out = "".join(lines)
    assert proc.returncode == 0
    assert "6" in out.splitlines()  # `kept` was restored
    after = out[out.index("second") :]
    assert "The kernel was killed (SIGKILL) while idle and was restarted" in " ".join(after.split())
