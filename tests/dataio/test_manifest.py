"""Dump manifests: one schema, checked whole (with the files) before anything is loaded,
and pickles hashed before a byte of them is unpickled."""

from __future__ import annotations

import io
import json
import os
from fractions import Fraction

import numpy as np
import pytest

from cave_tui.dataio import (
    DataIOError,
    TrustRequiredError,
    dump_namespace,
    load_dump,
    read_dump,
    read_manifest,
)
from cave_tui.dataio.manifest import ManifestError, check_files, parse_manifest
from cave_tui.dataio.verified import read_verified
from cave_tui.runtime.ipython import IPythonRuntime
from tests.helpers.dumps import entry_for, payload, write_manifest


def _json_file(folder, file, value):
    folder.mkdir(exist_ok=True)
    (folder / file).write_text(json.dumps(value))


async def test_every_problem_is_reported_at_once_and_nothing_is_injected(tmp_path):
    d = tmp_path / "d"
    _json_file(d, "good.json", [1, 2])
    ok = entry_for(d, "good", "good.json", "json")
    variables = [
        ok,
        {**ok, "name": "__builtins__"},
        {**ok, "name": "len"},
        {**ok, "name": "1x"},
        {**ok, "name": "a", "file": "../../x.json"},
        {**ok, "name": "b", "file": "/etc/passwd"},
        {**ok, "name": "c", "format": "exe"},
        {**ok, "name": "e", "sha256": "nope"},
        {**ok, "name": "f", "bytes": -1},
        {k: v for k, v in ok.items() if k != "file"} | {"name": "g"},
        {**ok, "name": "h", "bytes": "7"},
        ok,
    ]
    write_manifest(d, variables, modules=[{"name": "m", "module": "os;rm -rf"}])
    runtime = IPythonRuntime()
    await runtime.execute("mine = 1")
    with pytest.raises(ManifestError) as caught:
        await load_dump(runtime, d, trust=True)
    problems = "\n".join(caught.value.problems)
    for expected in (
        "variables[1] (__builtins__).name: '__builtins__' starts with an underscore",
        "variables[2] (len).name: 'len' would shadow the Python builtin len()",
        "variables[3] (1x).name: '1x' is not a valid Python name",
        "variables[4] (a).file: '../../x.json' is not a file name inside the dump folder",
        "variables[5] (b).file: '/etc/passwd' is not a file name inside the dump folder",
        "variables[6] (c).format: unknown format 'exe'",
        "variables[7] (e).sha256: not a sha256",
        "variables[8] (f).bytes: Input should be greater than or equal to 0",
        "variables[9] (g).file: is missing",
        "variables[10] (h).bytes: Input should be a valid integer",
        "variables[11] (good): the name is already used by variables[0]",
        "modules[0] (m).module: 'os;rm -rf' is not a module name",
    ):
        assert expected in problems
    assert len(caught.value.problems) == 12
    assert "nothing was loaded" in str(caught.value)
    assert await runtime.names() == ["mine"]  # all or nothing: not even `good`
    with pytest.raises(ManifestError):
        read_manifest(d)


def test_a_manifest_that_is_not_one_says_so(tmp_path):
    (tmp_path / "manifest.json").write_text("[1, 2")
    with pytest.raises(DataIOError, match="is corrupt"):
        read_dump(tmp_path)
    (tmp_path / "manifest.json").write_text(json.dumps({"format": "cave-dump", "version": 9}))
    with pytest.raises(DataIOError, match="newer cave"):
        read_dump(tmp_path)
    write_manifest(tmp_path, {"x": 1})  # type: ignore[arg-type]
    with pytest.raises(ManifestError, match=r"variables: Input should be a valid list"):
        read_dump(tmp_path)


def test_links_may_not_leave_the_dump_folder(tmp_path):
    d = tmp_path / "d"
    _json_file(tmp_path, "outside.json", {"secret": 1})
    _json_file(d, "inside.json", {"fine": 1})
    os.symlink(tmp_path / "outside.json", d / "leak.json")
    os.symlink("inside.json", d / "alias.json")
    write_manifest(
        d,
        [
            entry_for(d, "leak", "leak.json", "json"),
            entry_for(d, "alias", "alias.json", "json"),
        ],
    )
    with pytest.raises(ManifestError) as caught:
        read_dump(d)
    assert caught.value.problems == [
        f"leak.json (variable leak) is a link to {tmp_path / 'outside.json'}, "
        "outside the dump folder"
    ]
    (d / "leak.json").unlink()
    write_manifest(d, [entry_for(d, "alias", "alias.json", "json")])
    assert read_dump(d).values == {"alias": {"fine": 1}}  # a link inside the folder is fine


async def test_a_pickle_is_hashed_before_it_is_unpickled(tmp_path):
    d, marker = tmp_path / "d", tmp_path / "ran"
    d.mkdir()
    (d / "cfg.pkl").write_bytes(payload(marker))
    forged = entry_for(d, "cfg", "cfg.pkl", "pickle")
    # The size is right but the sha256 is the original's: trusted or not, it never runs.
    write_manifest(d, [{**forged, "sha256": "0" * 64}])
    with pytest.raises(DataIOError, match=r"cfg\.pkl does not match its sha256"):
        await load_dump(IPythonRuntime(), d, trust=True)
    assert not marker.exists()
    with pytest.raises(DataIOError, match=r"cfg\.pkl does not match its sha256"):
        await load_dump(IPythonRuntime(), d, hold_back=True)  # held back, yet checked
    assert not marker.exists()
    # With the manifest forged too, only trust lets it run.
    write_manifest(d, [forged])
    with pytest.raises(TrustRequiredError, match=r"pickled objects \(cfg\).*--trust"):
        await load_dump(IPythonRuntime(), d)
    assert not marker.exists()
    await load_dump(IPythonRuntime(), d, trust=True)
    assert marker.read_text() == str(os.getpid())  # the payload is real


def test_a_pickle_replaced_after_the_checks_is_not_read(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    (d / "x.pkl").write_bytes(b"\x80\x05K\x01.")
    manifest, _ = parse_manifest(
        write_manifest(d, [entry_for(d, "x", "x.pkl", "pickle")]) / "manifest.json",
        fmt="cave-dump",
        version=1,
    )
    [checked] = check_files(manifest, d)
    (d / "new.pkl").write_bytes(b"\x80\x05K\x01.")  # the same bytes, another file
    os.replace(d / "new.pkl", d / "x.pkl")
    with pytest.raises(DataIOError, match="was replaced while the dump was being loaded"):
        read_verified(checked)


def test_an_object_array_in_a_dump_is_refused_even_with_trust(tmp_path):
    d = tmp_path / "d"
    d.mkdir()
    buffer = io.BytesIO()
    np.save(buffer, np.array([{"a": 1}], dtype=object), allow_pickle=True)
    (d / "arr.npy").write_bytes(buffer.getvalue())
    write_manifest(d, [entry_for(d, "arr", "arr.npy", "npy")])
    with pytest.raises(DataIOError, match="holds pickled objects") as caught:
        read_dump(d, trust=True)
    assert not isinstance(caught.value, TrustRequiredError)


async def test_modules_that_came_with_the_dump_need_trust(tmp_path, monkeypatch):
    d, marker = tmp_path / "d", tmp_path / "imported"
    _json_file(d, "n.json", 1)
    (d / "evil_helpers.py").write_text(f"open({str(marker)!r}, 'w').write('x')\n")
    monkeypatch.syspath_prepend(str(d))
    modules = [
        {"name": "helpers", "module": "evil_helpers"},
        {"name": "gravity", "module": "antigravity"},
        {"name": "js", "module": "json"},
        {"name": "gone", "module": "no_such_module_here"},
    ]
    write_manifest(d, [entry_for(d, "n", "n.json", "json")], modules=modules)
    runtime = IPythonRuntime()
    with pytest.raises(TrustRequiredError) as caught:
        await load_dump(runtime, d)
    message = str(caught.value)
    assert "helpers = evil_helpers, a file in the current folder or the dump folder" in message
    assert "gravity = antigravity, a module that acts when imported" in message
    assert "js" not in message.split("modules that")[1]
    assert not marker.exists() and await runtime.names() == []
    # Without trust but told to hold back: the rest loads, the two are named.
    loaded = await load_dump(runtime, d, hold_back=True)
    assert sorted(loaded.names) == ["js", "n"]
    reasons = {n["name"]: n["reason"] for n in loaded.not_restored}
    assert "not trusted" in reasons["helpers"] and "not trusted" in reasons["gravity"]
    assert reasons["gone"] == "module no_such_module_here is not installed here"
    assert not marker.exists()


async def test_a_name_no_dump_can_restore_is_skipped_with_why_not_written(tmp_path):
    runtime = IPythonRuntime()
    await runtime.execute("max = 5\nn = 1")
    result = await dump_namespace(runtime, tmp_path / "d")
    assert result.names == ["n"]
    assert "max (named like the Python builtin max()" in result.summary()
    restored = IPythonRuntime()
    assert (await load_dump(restored, tmp_path / "d")).names == ["n"]


async def test_trusted_pickles_restore_on_both_runtimes_and_survive_a_kernel_restart(
    any_runtime, tmp_path
):
    source = IPythonRuntime()
    await source.execute(
        "pair = (1, 'two')\nfrom fractions import Fraction\nthird = Fraction(1, 3)"
    )
    await dump_namespace(source, tmp_path / "d")
    loaded = await load_dump(any_runtime, tmp_path / "d", trust=True)
    assert sorted(loaded.names) == ["Fraction", "pair", "third"]
    assert await any_runtime.retrieve("pair") == (1, "two")
    if any_runtime.unpickles_out_of_process:  # the kernel: it got the bytes, not the object
        assert "Pickled" in repr(any_runtime.injected["pair"].value)
        await any_runtime.restart()
        assert await any_runtime.retrieve("third") == Fraction(1, 3)


async def test_definitions_are_checked_with_the_manifest_before_anything_runs(tmp_path):
    d, marker = tmp_path / "d", tmp_path / "ran"
    _json_file(d, "good.json", [1, 2])
    run = f"open({str(marker)!r}, 'w').close()\n"
    definitions = [
        {"name": "ok", "source": f"def ok():\n    return 1\n{run}"},
        {"name": "max", "source": run},
        {"name": "_hidden", "source": run},
        {"name": "bad", "source": ["not", "a", "string"]},
        {"name": "good", "source": run},  # the variable's name
        {"source": run},
    ]
    write_manifest(
        d, [entry_for(d, "good", "good.json", "json")], version=2, definitions=definitions
    )
    runtime = IPythonRuntime()
    with pytest.raises(ManifestError) as caught:
        await load_dump(runtime, d)
    problems = "\n".join(caught.value.problems)
    for expected in (
        "definitions[1] (max).name: 'max' would shadow the Python builtin max()",
        "definitions[2] (_hidden).name: '_hidden' starts with an underscore",
        "definitions[3] (bad).source: Input should be a valid string",
        "definitions[5].name: is missing",
        "definitions[4] (good): the name is already used by variables[0]",
    ):
        assert expected in problems, problems
    assert len(caught.value.problems) == 5
    assert not marker.exists() and await runtime.names() == []
    write_manifest(d, [entry_for(d, "good", "good.json", "json")], version=2, definitions=[])
    assert read_dump(d).definitions == []


async def test_the_manifest_says_which_names_the_user_gave(tmp_path):
    """`given` lists the user's names; a dump that does not say (an older one) gives all."""
    from cave_tui.dataio import dump_namespace
    from cave_tui.runtime.items import Variable

    source = IPythonRuntime(variables=[Variable("mine", [1, 2])])
    await source.execute("theirs = sum(mine)")
    await dump_namespace(source, tmp_path / "d")
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    assert manifest["given"] == ["mine"]
    restored = IPythonRuntime()
    await load_dump(restored, tmp_path / "d")
    assert restored.given_names() == {"mine"} and restored._ns["theirs"] == 3
    del manifest["given"]  # an older dump: all it holds is what the user loaded
    (tmp_path / "d" / "manifest.json").write_text(json.dumps(manifest))
    older = IPythonRuntime()
    await load_dump(older, tmp_path / "d")
    assert older.given_names() == {"mine", "theirs"}
    manifest["given"] = ["__builtins__"]
    (tmp_path / "d" / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(ManifestError, match="__builtins__"):
        await load_dump(IPythonRuntime(), tmp_path / "d")
    for runtime in (source, restored, older):
        await runtime.stop()
