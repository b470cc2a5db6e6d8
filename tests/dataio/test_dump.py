"""Dumps: a manifest, atomic replacement, incremental checkpoints, and recovery."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from cave_tui.dataio import checkpoint_namespace, dump_namespace, load_dump, read_manifest
from cave_tui.dataio import staging as staging_module
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Function, Variable
from cave_tui.runtime.shipped.persist import content_digest
from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT


async def test_manifest_lists_what_was_saved_and_what_was_not(tmp_path, frame):
    def helper(x: int) -> int:
        return x

    runtime = IPythonRuntime(variables=[Variable("df", frame)], functions=[Function(helper)])
    await runtime.execute("import os\nrows = len(df)\nstream = (r for r in range(rows))\n")
    result = await dump_namespace(runtime, tmp_path / "d")
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert manifest["format"] == "cave-dump" and manifest["cave_version"]
    assert [e["name"] for e in manifest["variables"]] == ["df", "rows"]
    skipped = {s["name"]: s["reason"] for s in manifest["skipped"]}
    assert "injected by the host" in skipped["helper"]
    assert "cannot be saved" in skipped["stream"]
    assert manifest["modules"] == [{"name": "os", "module": "os"}]
    assert "stream" in result.summary() and "not saved" in result.summary()


async def test_a_new_dump_replaces_the_old_one_whole(tmp_path, frame):
    runtime = IPythonRuntime(variables=[Variable("a", frame), Variable("b", 1)])
    await dump_namespace(runtime, tmp_path / "d")
    await runtime.delete("b")
    runtime.inject(Variable("c", [1, 2]))
    await dump_namespace(runtime, tmp_path / "d")
    assert sorted(p.name for p in (tmp_path / "d").iterdir()) == [
        "a.parquet",
        "c.json",
        "manifest.json",
    ]
    assert sorted(p.name for p in tmp_path.iterdir()) == ["d"]


async def test_swap_without_renameat2_and_recovery_between_the_renames(
    tmp_path, frame, monkeypatch
):
    runtime = IPythonRuntime(variables=[Variable("a", frame)])
    await dump_namespace(runtime, tmp_path / "d")
    monkeypatch.setattr(staging_module, "_exchange", lambda a, b: False)
    runtime.inject(Variable("a", frame.head(2)))
    await dump_namespace(runtime, tmp_path / "d")
    restored = IPythonRuntime()
    await load_dump(restored, tmp_path / "d")
    assert len(await restored.retrieve("a")) == 2
    # A crash between the two renames leaves no `d` but a complete hidden sibling.
    os.rename(tmp_path / "d", tmp_path / ".d.old-deadbeef.tmp")
    assert read_manifest(tmp_path / "d")["variables"][0]["name"] == "a"
    again = IPythonRuntime()
    await load_dump(again, tmp_path / "d")
    assert len(await again.retrieve("a")) == 2


KILL_SCRIPT = textwrap.dedent(
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
        with open(path, "r+b") as f:
            f.truncate(50)  # half-written…
        open(flag, "w").close()
        time.sleep(60)  # …and killed here

    async def main():
        first = IPythonRuntime(variables=[Variable("df", pd.DataFrame({"v": [1, 2, 3]}))])
        await dump_namespace(first, target)
        save_module.WRITERS["parquet"] = slow
        second = IPythonRuntime(variables=[Variable("df", pd.DataFrame({"v": [9]}))])
        await dump_namespace(second, target)

    asyncio.run(main())
    """
)


async def test_a_dump_killed_mid_write_leaves_the_previous_dump_intact(tmp_path):
    target, flag = tmp_path / "dump", tmp_path / "writing"
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(target), str(flag)], cwd=ROOT)
    try:
        deadline = time.monotonic() + 60
        while not flag.exists():
            assert proc.poll() is None, "the dumping process ended early"
            assert time.monotonic() < deadline
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait(10)
    finally:
        if proc.poll() is None:
            proc.kill()
    assert (target / "manifest.json").exists()
    restored = IPythonRuntime()
    loaded = await load_dump(restored, target)
    assert loaded.names == ["df"]
    assert (await restored.retrieve("df"))["v"].tolist() == [1, 2, 3]
    leftovers = list(Path(tmp_path).glob(".dump.*"))
    assert not leftovers, "the load removed the killed dump's staging folder"


async def test_checkpoints_rewrite_only_what_changed(tmp_path):
    big = pd.DataFrame({"v": np.arange(2_000_000)})  # over the re-save threshold
    runtime = IPythonRuntime(variables=[Variable("big", big), Variable("small", {"n": 1})])
    folder = tmp_path / "ns"
    first = await checkpoint_namespace(runtime, folder, changed=None)
    assert sorted(first.written) == ["big", "small"]
    files = {e["name"]: e["file"] for e in first.saved}
    big_mtime = (folder / files["big"]).stat().st_mtime_ns

    await runtime.execute("small['n'] = 2\nfresh = 3\n")
    second = await checkpoint_namespace(runtime, folder, changed={"small", "fresh"})
    assert sorted(second.written) == ["fresh", "small"]
    entries = {e["name"]: e for e in second.saved}
    assert entries["big"]["file"] == files["big"]
    assert (folder / files["big"]).stat().st_mtime_ns == big_mtime
    assert entries["small"]["file"] == "small.2.json"
    assert not (folder / files["small"]).exists()  # the superseded file is gone

    # Unreported mutation of a small object: the full sweep catches it; same bytes are kept.
    await runtime.execute("fresh_list = [1]\n")
    await runtime.execute("def grow(x):\n    x.append(2)\n")
    await runtime.execute("grow(fresh_list)\n")
    third = await checkpoint_namespace(runtime, folder, changed=set())
    assert "fresh_list" in third.written and "small" not in third.written
    await runtime.execute("grow(fresh_list)\n")
    fourth = await checkpoint_namespace(runtime, folder, changed=set())
    assert fourth.written == ["fresh_list"]

    await runtime.delete("fresh")
    fifth = await checkpoint_namespace(runtime, folder, changed=set())
    assert "fresh" not in fifth.names

    restored = IPythonRuntime()
    await load_dump(restored, folder, trust=True)
    assert (await restored.retrieve("small")) == {"n": 2}
    assert (await restored.retrieve("fresh_list")) == [1, 2, 2]
    assert len(await restored.retrieve("big")) == 2_000_000
    assert "fresh" not in await restored.names()


def test_content_digests_see_nested_changes_and_stop_at_their_limit():
    small = {"a": [1, 2, 3]}
    before = content_digest(small, 1 << 20)
    small["a"].append(4)  # the same objects, mutated inside
    assert before is not None and content_digest(small, 1 << 20) != before
    frame = pd.DataFrame({"v": np.arange(2_000_000)})
    assert content_digest({"frames": {"big": frame}}, 1 << 20) is None  # stops at the cap


@pytest.mark.parametrize("name", ["Data", "data"])
async def test_names_differing_only_in_case_get_distinct_files(tmp_path, name):
    runtime = IPythonRuntime(variables=[Variable("data", 1), Variable("Data", 2)])
    result = await dump_namespace(runtime, tmp_path / "d")
    files = {e["name"]: e["file"] for e in result.saved}
    assert len({f.lower() for f in files.values()}) == 2
    restored = IPythonRuntime()
    await load_dump(restored, tmp_path / "d")
    assert await restored.retrieve(name) == (1 if name == "data" else 2)
