"""Dump and session files that are links, FIFOs or endless devices: refused at once, never read.

`manifest.json`, `meta.json` and `events.jsonl` are opened as regular files of bounded size,
never through a link and never blocking (dataio/bounded_read.py); each case here used to
hang `cave` (a FIFO) or read until memory ran out (a link to /dev/zero).
"""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest

from cave_tui.dataio.bounded_read import UnsafeFileError, read_regular
from tests.reliability.real_cave import cave, code, script

DEADLINE = 30  # seconds: a loaded 2-core machine; a hang would be killed by `timeout`


def _session(root: Path) -> Path:
    """A minimal recorded session (one finished turn, no snapshot) written by hand."""
    folder = root / "20260101-000000-hostile"
    folder.mkdir(parents=True)
    records = [
        {"seq": 1, "type": "session", "version": 1, "id": folder.name},
        {"seq": 2, "type": "message", "turn": 1, "step": 0, "role": "user", "content": "hi"},
        {"seq": 3, "type": "user", "turn": 1, "content": "hi"},
        {"seq": 4, "type": "message", "turn": 1, "step": 1, "role": "assistant", "content": "yo"},
        {"seq": 5, "type": "turn_end", "turn": 1, "status": "completed"},
    ]
    (folder / "events.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    return folder


def _timed(*args: str, cwd: Path):
    started = time.monotonic()
    result = cave(*args, cwd=cwd, timeout=DEADLINE)
    return result, time.monotonic() - started


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_load_of_a_manifest_that_is_a_fifo_or_a_link_to_dev_zero_ends_at_once(tmp_path, kind):
    dump = tmp_path / "dump"
    dump.mkdir()
    if kind == "fifo":
        os.mkfifo(dump / "manifest.json")
    else:
        (dump / "manifest.json").symlink_to("/dev/zero")
    result, took = _timed("run", "/vars", "--load", "dump", "--in-process", cwd=tmp_path)
    assert result.returncode == 2, result.stderr
    expected = "FIFO" if kind == "fifo" else "symbolic link"
    assert expected in result.stderr and "manifest.json" in result.stderr
    assert "Traceback" not in result.stderr
    assert took < DEADLINE


@pytest.mark.parametrize("kind", ["fifo", "zero"])
def test_resume_of_a_session_whose_log_is_a_fifo_or_a_link_to_dev_zero_exits_2(tmp_path, kind):
    folder = _session(tmp_path / "s")
    (folder / "events.jsonl").unlink()
    if kind == "fifo":
        os.mkfifo(folder / "events.jsonl")
    else:
        (folder / "events.jsonl").symlink_to("/dev/zero")
    model = script(tmp_path / "m.yaml", ["never asked"])
    result, _ = _timed(
        "run", "go", "--model", model, "--sessions-dir", "s", "--resume", "last", "--in-process",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 2, result.stderr
    assert "events.jsonl" in result.stderr and "Traceback" not in result.stderr
    expected = "FIFO" if kind == "fifo" else "symbolic link"
    assert expected in result.stderr


def test_a_meta_json_that_is_a_fifo_is_not_read_and_resume_goes_on(tmp_path):
    folder = _session(tmp_path / "s")
    os.mkfifo(folder / "meta.json")
    model = script(tmp_path / "m.yaml", [code("print('again')"), "done"])
    result, _ = _timed(
        "run", "go", "--model", model, "--sessions-dir", "s", "--resume", "last", "--in-process",
        cwd=tmp_path,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert "again" in result.stdout
    # the FIFO was replaced by a regular meta.json, written atomically
    assert json.loads((folder / "meta.json").read_text())["status"] == "completed"


def test_read_regular_refuses_links_devices_and_oversized_files(tmp_path):
    (tmp_path / "zero").symlink_to("/dev/zero")
    with pytest.raises(UnsafeFileError, match="symbolic link"):
        read_regular(tmp_path / "zero", 100)
    with pytest.raises(UnsafeFileError, match="character device"):
        read_regular("/dev/zero", 100)
    (tmp_path / "big").write_bytes(b"x" * 101)
    with pytest.raises(UnsafeFileError, match="over the 100-byte limit"):
        read_regular(tmp_path / "big", 100)
    assert read_regular(tmp_path / "big", 101) == b"x" * 101
    with pytest.raises(FileNotFoundError):
        read_regular(tmp_path / "missing", 100)
