"""Putting a dump in place when the target cannot be swapped, and cleaning up killed dumps."""

from __future__ import annotations

import errno
import json
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pandas as pd
import pytest

from cave_tui.dataio import dump_namespace, load_dump, read_dump
from cave_tui.dataio import staging as staging_module
from cave_tui.dataio.dump import check_dump_target
from cave_tui.dataio.dump_lock import DumpBusyError
from cave_tui.dataio.staging import Staging, remove_stale
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Variable
from tests.helpers.paths import REPO_ROOT


def _files(folder: Path) -> set[str]:
    return {p.name for p in folder.iterdir()}


async def test_a_swap_refused_with_ebusy_commits_inside_the_target(tmp_path, monkeypatch):
    """A mount point `is_mount_point` cannot see (EBUSY at the rename) still takes the dump."""

    def busy(a: Path, b: Path) -> bool:
        raise OSError(errno.EBUSY, "Device or resource busy", str(b))

    runtime = IPythonRuntime(variables=[Variable("df", pd.DataFrame({"v": [1, 2]}))])
    target = tmp_path / "vol"
    await dump_namespace(runtime, target)  # a new folder: a plain rename
    monkeypatch.setattr(staging_module, "_exchange", busy)
    runtime.inject(Variable("df", pd.DataFrame({"v": [7]})))
    await runtime.execute("n = 3")
    result = await dump_namespace(runtime, target)
    assert sorted(result.names) == ["df", "n"]
    assert read_dump(target).values["n"] == 3
    assert read_dump(target).values["df"]["v"].tolist() == [7]
    manifest = json.loads((target / "manifest.json").read_text())
    assert _files(target) == {e["file"] for e in manifest["variables"]} | {"manifest.json"}
    assert [p for p in tmp_path.iterdir() if p.name != "vol"] == []  # no staging left beside


async def test_a_mount_point_is_staged_inside_and_a_writers_folder_is_no_other_file(
    tmp_path, monkeypatch
):
    monkeypatch.setattr(staging_module, "is_mount_point", lambda path: True)
    target = tmp_path / "vol"
    target.mkdir()
    running = Staging.create(target)
    assert running.inside and running.path.parent == target
    check_dump_target(target)  # a dump being written there is not "other files"
    assert remove_stale(target) == []  # its writer holds the lock
    runtime = IPythonRuntime(variables=[Variable("a", 1)])
    await dump_namespace(runtime, target)
    assert running.path.is_dir() and read_dump(target).values == {"a": 1}
    running._release()  # as if its process had died
    assert remove_stale(target) == [running.path] and not running.path.exists()


SLOW_DUMP = textwrap.dedent(
    """
    import asyncio, sys, time
    import pandas as pd
    from cave_tui.dataio import dump_namespace
    from cave_tui.dataio import save as save_module
    from cave_tui.runtime.ipython import IPythonRuntime
    from cave_tui.runtime.items import Variable

    target, flag = sys.argv[1], sys.argv[2]
    real = save_module.WRITERS["parquet"]

    def slow(obj, path, **options):
        real(obj, path, **options)
        open(flag, "w").close()
        time.sleep(60)  # killed here, mid-dump

    save_module.WRITERS["parquet"] = slow
    runtime = IPythonRuntime(variables=[Variable("df", pd.DataFrame({"v": [9]}))])
    asyncio.run(dump_namespace(runtime, target))
    """
)


async def test_the_next_dump_removes_what_a_killed_dump_left_never_a_running_ones(tmp_path):
    target, flag = tmp_path / "dump", tmp_path / "writing"
    first = IPythonRuntime(variables=[Variable("kept", 1)])
    await dump_namespace(first, target)
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_DUMP, str(target), str(flag)], cwd=REPO_ROOT
    )
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert proc.poll() is None and time.monotonic() < deadline
            time.sleep(0.05)
        (leftover,) = [p for p in tmp_path.iterdir() if p.name.startswith(".dump.dump-")]
        # While it runs, a second dump is refused naming it, and a load leaves it alone.
        with pytest.raises(DumpBusyError, match=f"process {proc.pid} is writing a dump"):
            await dump_namespace(IPythonRuntime(variables=[Variable("kept", 3)]), target)
        assert (await _loaded(target))["kept"] == 1
        assert leftover.is_dir()
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert leftover.is_dir()  # a killed dump leaves its hidden folder…
    restored = IPythonRuntime()
    await load_dump(restored, target)  # …which the next load (or dump) removes
    assert not leftover.exists() and await restored.retrieve("kept") == 1
    await dump_namespace(IPythonRuntime(variables=[Variable("kept", 2)]), target)
    assert (await _loaded(target))["kept"] == 2
    assert sorted(p.name for p in tmp_path.iterdir()) == ["dump", "writing"]


async def _loaded(target: Path) -> dict[str, object]:
    return dict(read_dump(target).values)
