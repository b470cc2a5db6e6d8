"""A killed save leaves a temporary file; the next save in that folder removes it (never a
save still running in another process). A full disk says so, naming the file, for every
writer (NumPy's included), and leaves nothing behind."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pandas as pd

from cave_tui.dataio import save_object
from cave_tui.dataio.atomic import cleanup_temp_files
from tests.reliability.real_cave import needs_tmpfs, with_tmpfs

STUCK_SAVE = """
import sys, time
sys.path.insert(0, sys.argv[1])
from stuck import Stuck
from cave_tui.dataio import save_object
save_object(Stuck(), sys.argv[2])
"""
STUCK_MODULE = """
import pathlib, sys, time

class Stuck:
    def __reduce__(self):  # runs while the save writes its temporary file
        pathlib.Path(sys.argv[3]).write_text("writing")
        time.sleep(120)
        return (Stuck, ())
"""


def _age(path: Path, seconds: float = 3600) -> None:
    then = time.time() - seconds
    os.utime(path, (then, then))


def test_a_killed_save_leaves_a_file_the_next_save_removes(tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (tmp_path / "stuck.py").write_text(STUCK_MODULE)
    flag = tmp_path / "flag"
    child = subprocess.Popen(
        [sys.executable, "-c", STUCK_SAVE, str(tmp_path), str(out / "x.pkl"), str(flag)],
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    try:
        deadline = time.monotonic() + 30
        while not flag.exists() and time.monotonic() < deadline:
            time.sleep(0.05)
        assert flag.exists(), "the child never started writing"
        [tmp] = [p for p in out.iterdir() if p.name.startswith(".x.pkl.")]
        _age(tmp)  # old, but its writer is alive and holds its lock: left alone
        assert cleanup_temp_files(out) == [] and tmp.exists()
    finally:
        child.send_signal(signal.SIGKILL)
        child.wait()
    assert tmp.exists()  # the leftover of a killed save
    user_files = [".notes.tmp", "draft.tmp", ".cache.abc.tmp"]
    for name in user_files:
        (out / name).write_text("the user's")
        _age(out / name)
    saved = save_object(pd.DataFrame({"a": [1]}), out / "y.csv")
    assert not tmp.exists()
    assert sorted(p.name for p in out.iterdir()) == sorted([*user_files, saved.path.name])


def test_a_fresh_temporary_file_is_left_alone(tmp_path):
    """One just created may not be locked yet: only older ones are taken for leftovers."""
    fresh = tmp_path / ".a.csv.0123456789ab.tmp"
    fresh.write_text("")
    assert cleanup_temp_files(tmp_path) == [] and fresh.exists()
    _age(fresh)
    assert cleanup_temp_files(tmp_path) == [fresh] and not fresh.exists()


FULL_DISK = """
import os, sys
import numpy as np, pandas as pd
from cave_tui.dataio import DataIOError, save_object
folder = sys.argv[1]
values = np.random.default_rng(0).random(300_000)
for name, obj in [("a.npy", values), ("b.parquet", pd.DataFrame({"v": values})),
                  ("c.csv", pd.DataFrame({"v": values})), ("d.pkl", values.tolist())]:
    try:
        save_object(obj, f"{folder}/{name}")
        print("saved", name)
    except DataIOError as exc:
        print(exc)
print(os.listdir(folder))  # the tmpfs is gone with this process: look now
"""


def test_npy_files_are_what_numpy_writes(tmp_path):
    """cave writes .npy itself (through `write`, for its errors): byte for byte np.save's."""
    import io

    import numpy as np

    arrays = {
        "c-order": np.arange(24.0).reshape(2, 3, 4),
        "fortran": np.asfortranarray(np.arange(24.0).reshape(2, 3, 4)),
        "strided": np.arange(100)[::3],
        "dates": np.array(["2024-01-01", "2025-02-02"], dtype="M8[D]"),
        "records": np.array([(1, 2.5, b"ab")], dtype=[("a", "i4"), ("b", "f8"), ("c", "S2")]),
        "empty": np.empty((0, 3)),
        "scalar": np.array(5),
        "text": np.array(["é", "abc"]),
    }
    for name, array in arrays.items():
        expected = io.BytesIO()
        np.save(expected, array, allow_pickle=False)
        saved = save_object(array, tmp_path / f"{name}.npy")
        assert saved.path.read_bytes() == expected.getvalue(), name


@needs_tmpfs
def test_a_full_disk_names_the_file_and_leaves_nothing(tmp_path):
    disk = tmp_path / "disk"
    disk.mkdir()
    result = subprocess.run(
        [*with_tmpfs((disk, "size=1m")), sys.executable, "-c", FULL_DISK, str(disk)],
        capture_output=True,
        text=True,
        timeout=60,
        env={**os.environ, "PYTHONPATH": os.pathsep.join(sys.path)},
    )
    lines = result.stdout.splitlines()
    assert len(lines) == 5 and lines[-1] == "[]", (result.stdout, result.stderr)
    for line, name in zip(lines[:4], ["a.npy", "b.parquet", "c.csv", "d.pkl"], strict=True):
        assert line == (
            f"cannot write {disk / name}: the disk is full (no space left on the device); "
            "nothing was replaced"
        )
    assert "requested" not in result.stdout
