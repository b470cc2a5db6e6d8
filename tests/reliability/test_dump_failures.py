"""`cave run --dump DIR` when the dump cannot be written: exit 3, a clear line, nothing lost.

The four causes are real: the target turned into a file or a folder of other files while
the run worked, a read-only file system and a full one (a tmpfs mounted in a private mount
namespace). The session keeps the namespace in each case. A dump to the root of a mount
point (item 7) works, and replaces the previous dump there.
"""

from __future__ import annotations

import json
from pathlib import Path

import pexpect
import pytest

from cave_tui.dataio import read_dump
from cave_tui.session import SessionStore
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

EXIT_DUMP_FAILED = 3


def _snapshot_names(sessions: Path) -> set[str]:
    folder = SessionStore(sessions).resolve("last")
    manifest = json.loads((folder / "namespace" / "manifest.json").read_text())
    return {entry["name"] for entry in manifest["variables"]}


def _assert_dump_failed(result, tmp_path: Path, reason: str) -> None:
    assert result.returncode == EXIT_DUMP_FAILED, result.stderr
    assert "completed" in result.stdout  # the task itself was done
    (line,) = [x for x in result.stderr.splitlines() if "dump failed" in x]
    assert reason in line and "Nothing is lost: session" in line and "--resume" in line
    assert "kept" in _snapshot_names(tmp_path / "s")  # the namespace survives


@pytest.mark.parametrize(
    ("make", "reason"),
    [
        ("open('out', 'w').write('x')", "it is a file, not a folder"),
        ("import os; os.mkdir('out'); open('out/notes.txt', 'w').write('x')", "other files"),
    ],
    ids=["a-file", "a-folder-of-other-files"],
)
def test_a_target_spoilt_during_the_run_fails_the_exit(tmp_path, make, reason):
    model = script(tmp_path / "m.yaml", [code(f"kept = 41\n{make}"), "done"])
    # The model's code writes into the folder cave runs in: in process (a root host's kernel
    # runs as nobody, in a folder of its own).
    result = cave(
        "run", "go", "--model", model, "--policy", "trusted", "--dump", "out",
        "--sessions-dir", "s", "--in-process", cwd=tmp_path,
    )  # fmt: skip
    _assert_dump_failed(result, tmp_path, reason)


def test_a_target_that_cannot_take_a_dump_stops_the_start(tmp_path):
    (tmp_path / "out").write_text("x")
    model = script(tmp_path / "m.yaml", ["done"])
    result = cave("run", "go", "--model", model, "--dump", "out", cwd=tmp_path)
    assert result.returncode == 3  # the dump could not be written: refused before the work
    assert "cannot start" in result.stderr and "it is a file, not a folder" in result.stderr


@needs_tmpfs
@pytest.mark.parametrize(
    ("options", "reason"),
    [("ro,size=1m", "read-only"), ("size=64k", "the disk is full")],
    ids=["read-only", "full-disk"],
)
def test_a_read_only_or_full_file_system_fails_the_exit(tmp_path, options, reason):
    (tmp_path / "mnt").mkdir()
    replies = [code("import numpy as np\nkept = 41\nbig = np.zeros(100_000)"), "done"]
    model = script(tmp_path / "m.yaml", replies)
    result = cave(
        "run", "go", "--model", model, "--dump", "mnt/out", "--sessions-dir", "s",
        cwd=tmp_path, prefix=with_tmpfs((tmp_path / "mnt", options)),
    )  # fmt: skip
    _assert_dump_failed(result, tmp_path, reason)


@needs_tmpfs
def test_a_dump_to_the_root_of_a_mount_point_replaces_the_previous_one(tmp_path):
    """`--dump` to a tmpfs root: renaming a mount point fails (EBUSY), so it commits inside."""
    mnt, copy = tmp_path / "mnt", tmp_path / "copy"
    mnt.mkdir()
    copy.mkdir()
    first = script(tmp_path / "1.yaml", [code("x = 1\nlabel = 'first'"), "done"])
    second = script(tmp_path / "2.yaml", [code("y = x + 1\nlabel = 'second'"), "done"])
    body = (
        f"{CAVE} run a --model {first} --dump mnt --sessions-dir s && "
        f"{CAVE} run b --model {second} --load mnt --dump mnt --sessions-dir s && "
        "cp -a mnt/. copy/"
    )
    result = shell(body, cwd=tmp_path, prefix=with_tmpfs((mnt, "size=10m")))
    assert result.returncode == 0, result.stderr
    assert "Device or resource busy" not in result.stderr
    assert read_dump(copy).values == {"x": 1, "y": 2, "label": "second"}
    manifest = json.loads((copy / "manifest.json").read_text())
    files = {entry["file"] for entry in manifest["variables"]}
    assert {p.name for p in copy.iterdir()} == files | {"manifest.json"}  # the old ones went


def test_cave_plain_says_the_dump_failed_and_exits_3(tmp_path):
    model = script(tmp_path / "m.yaml", ["hi"])
    child = pexpect.spawn(
        CAVE,
        [
            "--plain",
            "--model",
            model,
            "--policy",
            "trusted",
            "--dump",
            "out",
            "--sessions-dir",
            "s",
            "--in-process",  # `!` code writes into the folder cave runs in
        ],
        cwd=str(tmp_path),
        env=env(tmp_path, PROMPT_TOOLKIT_NO_CPR="1"),
        encoding="utf-8",
        timeout=60,
    )
    try:
        child.expect("cave›")
        child.sendline("!kept = 41; open('out', 'w').write('x')")
        child.expect("cave›")
        child.sendline("/quit")
        child.expect("dump failed: cannot dump into .*out: it is a file")
        child.expect("Nothing is lost: session")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == EXIT_DUMP_FAILED
    assert "kept" in _snapshot_names(tmp_path / "s")
