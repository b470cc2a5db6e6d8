"""`cave run --resume last` says how the restored namespace differs from the conversation.

Real `cave run` processes: killed with SIGKILL between a step's output and its snapshot,
every snapshot failing on a full disk, the snapshot's manifest deleted, one snapshot file
corrupted among several, hand-edited records in `events.jsonl`.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from cave_tui.session import SessionStore, read_session
from tests.reliability.real_cave import (
    CAVE,
    cave,
    code,
    env,
    needs_tmpfs,
    script,
    shell,
    with_tmpfs,
)

RUN = ("--sessions-dir", "s", "--in-process")


def _resume(cwd: Path, *replies: str) -> subprocess.CompletedProcess[str]:
    model = script(cwd / "again.yaml", list(replies) or [code("print('resumed')"), "done"])
    return cave("run", "again", "--model", model, *RUN, "--resume", "last", cwd=cwd)


def _records(cwd: Path) -> list[dict]:
    found = list((cwd / "s").glob("*/events.jsonl"))
    if not found:
        return []
    lines = found[0].read_bytes().split(b"\n")[:-1]  # a torn last line is still being written
    return [json.loads(line) for line in lines if line.strip()]


def test_kill_9_between_a_steps_output_and_its_snapshot_is_said_on_resume(tmp_path):
    # Step 2's snapshot blocks in `Slow.__reduce__` (a trusted policy lets the cell define
    # it), so the kill lands, every time, after step 2's output and before its snapshot.
    slow = (
        "import time\nclass Slow:\n    def __reduce__(self):\n        time.sleep(60)\n"
        "        return (int, ())\n"
    )
    # Snapshots run in the background: step 2 starts once step 1's is logged (committed),
    # so that one holds x = 1, as the rest of this test says.
    logged = (
        "import glob\nwhile not any('\"snapshot\"' in open(p).read() "
        "for p in glob.glob('s/*/events.jsonl')):\n    time.sleep(0.05)\n"
    )
    replies = [
        code("x = 1\nprint('x is', x)"),
        code(f"{slow}{logged}x = 2\ny = 5\nslow = Slow()\nprint('x is', x)"),
        "never reached",
    ]
    model = script(tmp_path / "first.yaml", replies)
    proc = subprocess.Popen(
        [CAVE, "run", "go", "--model", model, *RUN, "--policy", "trusted"],
        cwd=tmp_path, env=env(tmp_path), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
        start_new_session=True,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 60
        while not any(
            r["type"] == "execution_output" and r["step"] == 2 for r in _records(tmp_path)
        ):
            assert proc.poll() is None and time.monotonic() < deadline, "step 2 never ended"
            time.sleep(0.05)
        os.killpg(proc.pid, signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(10)
    snapshots = [r for r in _records(tmp_path) if r["type"] == "snapshot"]
    assert [r["step"] for r in snapshots] == [1]  # step 2's snapshot never happened

    result = _resume(tmp_path, code("print('now', x)"), "done")
    assert result.returncode == 0, result.stderr
    said = result.stderr
    assert "1 names restored" in said
    assert "x: restored the value from before turn 1 step 2" in said
    assert "turn 1 step 2 ran after the last snapshot and changed it" in said
    assert "not restored: " in said and "y" in said and "slow" in said
    assert "now 1" in result.stdout  # it was the old value, as said
    data = read_session(SessionStore(tmp_path / "s").resolve("last"))
    resumed = next(r for r in data.records if r["type"] == "resume")
    stale = {s["name"]: s for s in resumed["stale"]}
    assert stale["x"] == {"name": "x", "restored": True, "changed_by": ["turn 1 step 2"]}
    assert stale["y"]["restored"] is False
    # the model is told too, before the next task
    notes = [r["content"] for r in data.records if r["type"] == "message"]
    assert any("older than this conversation" in n and "x: restored" in n for n in notes)


@needs_tmpfs
def test_every_snapshot_failing_on_a_full_disk_is_said_on_resume(tmp_path):
    """The sessions folder on a 256 KiB tmpfs: the log fits, no snapshot of 1 MB does."""
    first = script(tmp_path / "first.yaml", [code("x = 1\nbig = b'0' * 1_000_000"), "done"])
    again = script(tmp_path / "again.yaml", [code("print('hi')"), "done"])
    (tmp_path / "s").mkdir()
    body = (
        f"{CAVE} run go --model {first} {' '.join(RUN)} && "
        f"{CAVE} run again --model {again} {' '.join(RUN)} --resume last"
    )
    result = shell(body, cwd=tmp_path, prefix=with_tmpfs((tmp_path / "s", "size=256k")))
    assert result.returncode == 0, result.stderr
    said = result.stderr
    assert "every namespace snapshot of this session failed" in said
    assert "No space left on device" in said or "disk is full" in said.lower()
    assert "not restored: x, big (turn 1 step 1 bound them after the last snapshot)" in said


@pytest.fixture(scope="module")
def recorded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One finished session binding several variables (json, parquet, numpy, pickle)."""
    base = tmp_path_factory.mktemp("recorded")
    src = "import numpy as np, pandas as pd\na = 1\nb = 'two'\nframe = pd.DataFrame({'v': [1, 2]})"
    src += "\narr = np.arange(4)\nobjs = {1, 2}\nprint('ok')"
    model = script(base / "first.yaml", [code(src), "done"])
    result = cave("run", "go", "--model", model, *RUN, cwd=base)
    assert result.returncode == 0, result.stderr
    return base


def _copy(recorded: Path, tmp_path: Path) -> Path:
    for part in ("s", "data"):
        if (recorded / part).exists():
            shutil.copytree(recorded / part, tmp_path / part)
    return next((tmp_path / "s").iterdir())


def test_a_missing_snapshot_manifest_is_said_on_resume(recorded, tmp_path):
    folder = _copy(recorded, tmp_path)
    (folder / "namespace" / "manifest.json").unlink()
    result = _resume(tmp_path)
    assert result.returncode == 0, result.stderr
    assert "the namespace snapshot is missing (namespace/manifest.json not found" in result.stderr
    assert "0 names restored" in result.stderr


def test_one_corrupted_snapshot_file_holds_back_only_its_variable(recorded, tmp_path):
    folder = _copy(recorded, tmp_path)
    manifest = json.loads((folder / "namespace" / "manifest.json").read_text())
    entry = next(e for e in manifest["variables"] if e["name"] == "frame")
    path = folder / "namespace" / entry["file"]
    path.write_bytes(b"\0" * path.stat().st_size)  # same size, other bytes
    result = _resume(tmp_path, code("print(a, b, arr.tolist(), sorted(objs))"), "done")
    assert result.returncode == 0, result.stderr
    assert "not restored: frame (" in result.stderr
    assert "corrupt" in result.stderr.split("not restored: frame (")[1]
    assert "1 two [0, 1, 2, 3] [1, 2]" in result.stdout


def test_hand_edited_log_records_are_skipped_with_a_notice(recorded, tmp_path):
    folder = _copy(recorded, tmp_path)
    log = folder / "events.jsonl"
    lines = log.read_text().splitlines()
    bad = [
        '{"seq": 90, "type": "message", "turn": "two", "role": "user", "content": "x"}',
        "[1, 2, 3]",
        '{"seq": 91, "type": "message", "turn": 1, "content": "no role"}',
        '{"seq": 92, "type": "made_up"}',
        '{"seq": 93, "type": "injection", "name": 5}',
        '{"seq": "94", "type": "notice"}',
        "not json at all",
        '{"seq": 95, "type": "injection", "name": "pkgdata", "source": {"kind": "package"}}',
    ]
    log.write_text("\n".join(lines[:3] + bad + lines[3:]) + "\n")
    result = _resume(tmp_path, code("print(a)"), "done")
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr
    said = result.stderr
    assert "skipped unusable records of events.jsonl: line 4 (turn is not an integer)" in said
    for text in (
        "line 5 (not a JSON object)",
        "line 6 (no role)",
        "line 7 (unknown type 'made_up')",
        "line 8 (name is not a string)",
        "line 9 (seq is not an integer)",
        "line 10 (not JSON)",
    ):
        assert text in said
    assert "pkgdata (its injection record (seq 95) is unusable (KeyError('module')))" in said
    assert "\n1\n" in f"\n{result.stdout}"
