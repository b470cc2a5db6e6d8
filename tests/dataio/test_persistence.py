"""Dumps and snapshots keep every name: past the display cap, definitions as source, and
what cannot be saved named on restore; snapshots write only what changed."""

from __future__ import annotations

import json

from cave_tui.dataio import checkpoint_namespace, dump_namespace, load_dump, read_manifest
from cave_tui.dataio import dump as dump_module
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.security import SecurityChecker

MANY = 10_050  # past the in-process summary's cap of 10,000


async def test_a_dump_keeps_every_variable_past_the_display_cap(tmp_path):
    runtime = IPythonRuntime()
    await runtime.execute("\n".join(f"v{i} = [{i}]" for i in range(MANY)))
    result = await dump_namespace(runtime, tmp_path / "d")
    assert len(result.saved) == MANY and not result.skipped
    manifest = read_manifest(tmp_path / "d")
    assert {e["name"] for e in manifest["variables"]} == {f"v{i}" for i in range(MANY)}
    assert len(list((tmp_path / "d").iterdir())) == MANY + 1  # and the manifest
    await runtime.stop()


DEFINING = """\
import functools

@functools.lru_cache
def cached(n):
    return n * 2

class Point:
    def norm(self):
        return 5

square = lambda v: v * v
numbers = [1, 2, 3]
gen = (i for i in numbers)
"""


async def test_definitions_come_back_without_trust_and_the_rest_is_named(tmp_path):
    runtime = IPythonRuntime()
    await runtime.execute(DEFINING)
    result = await dump_namespace(runtime, tmp_path / "d")
    assert [e["name"] for e in result.saved] == ["numbers"]
    assert [d["name"] for d in result.definitions] == ["cached", "Point", "square"]
    assert "kept as their source" in result.summary() and "gen (a generator" in result.summary()
    manifest = read_manifest(tmp_path / "d")
    assert manifest["skipped"] == [
        {
            "name": "gen",
            "type": "generator",
            "reason": "a generator: its paused state cannot be saved; create it again",
            "cause": "unsaveable",
        }
    ]
    restored = IPythonRuntime()
    loaded = await load_dump(restored, tmp_path / "d")  # no pickle in it: no trust needed
    run = await restored.execute("print(cached(4), Point().norm(), square(3), numbers)")
    assert run.output == "8 5 9 [1, 2, 3]\n"
    assert loaded.names == ["numbers", "functools", "cached", "Point", "square"]
    assert [n["name"] for n in loaded.not_restored] == ["gen"]
    assert "not restored: gen (not saved: a generator" in loaded.summary()
    await runtime.stop()
    await restored.stop()


async def test_a_tampered_definition_runs_only_as_a_checked_cell(tmp_path):
    runtime = IPythonRuntime()
    await runtime.execute("def f():\n    return 1\n")
    await dump_namespace(runtime, tmp_path / "d")
    manifest_path = tmp_path / "d" / "manifest.json"
    manifest = json.loads(manifest_path.read_text())
    marker = tmp_path / "ran"
    manifest["definitions"][0]["source"] = f"import os\nos.system('touch {marker}')\n"
    manifest_path.write_text(json.dumps(manifest))
    checked = IPythonRuntime(security_checker=SecurityChecker.for_policy("strict"))
    loaded = await load_dump(checked, tmp_path / "d")
    assert not marker.exists()
    assert loaded.names == [] and loaded.not_restored[0]["name"] == "f"
    assert "running its definition again failed" in loaded.not_restored[0]["reason"]
    await runtime.stop()
    await checked.stop()


async def test_a_snapshot_writes_only_what_changed_in_place_mutations_included(
    tmp_path, monkeypatch
):
    runtime = IPythonRuntime()
    await runtime.execute("\n".join(f"v{i} = [{i}]" for i in range(2_000)))
    folder = tmp_path / "ns"
    first = await checkpoint_namespace(runtime, folder, changed=None)
    assert len(first.saved) == 2_000
    writes: list[str] = []
    real = dump_module.write_in_format

    def counted(obj, path, fmt, **options):
        writes.append(path.name)
        return real(obj, path, fmt, **options)

    monkeypatch.setattr(dump_module, "write_in_format", counted)
    (await runtime.retrieve("v7")).append(0)  # in place, from the host: nobody reports it
    second = await checkpoint_namespace(runtime, folder, changed=set())
    assert second.written == ["v7"] and writes == ["v7.2.json"]
    third = await checkpoint_namespace(runtime, folder, changed={"v8"})  # reported, same bytes
    assert third.written == [] and writes == ["v7.2.json"]
    restored = IPythonRuntime()
    await load_dump(restored, folder)
    assert await restored.retrieve("v7") == [7, 0]
    await runtime.stop()
    await restored.stop()
