"""Dumps and snapshots keep every name: past the display cap, definitions as source, and
what cannot be saved named on restore; snapshots write only what changed."""

from __future__ import annotations

import json

from cave_tui.dataio import checkpoint_namespace, dump_namespace, load_dump, read_manifest
from cave_tui.dataio import dump as dump_module
from cave_tui.dataio.plan import plan_dump, unsaved
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
    made = await runtime.execute("\n".join(f"v{i} = [{i}]" for i in range(2_000)))
    assert made.success, made.error_text  # once under load, nothing was saved: say why
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


async def test_names_no_dump_restores_are_skipped_with_their_cause_even_as_source(tmp_path):
    runtime = IPythonRuntime()
    await runtime.execute("def max(*a):\n    return 0\n\nlen = lambda v: 1\nsum_ = 3")
    result = await dump_namespace(runtime, tmp_path / "d")
    assert {s["name"]: s["cause"] for s in result.skipped} == {"max": "name", "len": "name"}
    assert result.definitions == [] and [e["name"] for e in result.saved] == ["sum_"]
    assert "max (named like the Python builtin max()" in result.summary()
    restored = IPythonRuntime()
    loaded = await load_dump(restored, tmp_path / "d")  # the manifest's schema accepts it
    assert loaded.names == ["sum_"]
    assert sorted(n["name"] for n in loaded.not_restored) == ["len", "max"]
    await runtime.stop()
    await restored.stop()


async def test_a_reserved_name_the_host_binds_is_the_hosts_not_a_lost_name():
    """The agent's tools sit under reserved names (a kernel lists them): the host binds them
    again, so they are skipped as the host's, not as names lost to the dump."""
    from cave_tui.runtime.items import Function
    from cave_tui.runtime.shipped.persist import Keep, Persistable

    def activate_skill(name: str) -> str:
        return name

    class Listed:
        injected = {"activate_skill": Function(activate_skill)}

        async def persistable(self, digest_below=0):
            return [
                Persistable("activate_skill", Keep.VALUE, "function"),
                Persistable("final_answer", Keep.SOURCE, "function", source="def f(): 0\n"),
                Persistable("n", Keep.VALUE, "int"),
            ]

    plan = await plan_dump(Listed())
    assert [(s["name"], s["cause"]) for s in plan.skipped] == [
        ("activate_skill", "host"),
        ("final_answer", "name"),  # the model's own definition under the tool's name
    ]
    assert [v.name for v in plan.values] == ["n"] and plan.definitions == []
    assert unsaved(plan.skipped) == [
        {"name": "final_answer", "reason": f"not saved: {plan.skipped[1]['reason']}"}
    ]


async def test_held_back_entries_survive_the_snapshot_cleanup(tmp_path):
    """`carry` entries are listed before the manifest is written: the files the manifest
    does not list are removed after it, and a held-back pickle must not be one of them."""
    before = IPythonRuntime()
    await before.execute("pair = (1, 2)\nn = 5\ndef f():\n    return n\n")
    folder = tmp_path / "ns"
    first = await checkpoint_namespace(before, folder)
    held = [e for e in first.saved if e["name"] == "pair"]
    assert held and held[0]["format"] == "pickle"
    resumed = IPythonRuntime()  # a resume that held `pair` back: the name is not bound
    await resumed.execute("n = 6\ndef f():\n    return n\n")
    second = await checkpoint_namespace(resumed, folder, changed={"n"}, carry=held)
    assert (folder / held[0]["file"]).is_file()
    manifest = read_manifest(folder)
    assert sorted(e["name"] for e in manifest["variables"]) == ["n", "pair"]
    assert [d["name"] for d in manifest["definitions"]] == ["f"]
    assert second.written == ["n"]
    await resumed.execute("pair = 'rebound'")  # bound again: the held entry goes
    third = await checkpoint_namespace(resumed, folder, changed={"pair"}, carry=held)
    entry = next(e for e in third.saved if e["name"] == "pair")
    assert entry["file"] != held[0]["file"] and not (folder / held[0]["file"]).exists()
    await checkpoint_namespace(IPythonRuntime(), folder, carry=[])  # without carry: gone
    assert read_manifest(folder)["variables"] == []
    for runtime in (before, resumed):
        await runtime.stop()
