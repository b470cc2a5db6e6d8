"""Nothing lost: the kernel runtime's dumps, snapshots and resumes keep every name (past the
summary's cap of 500), the functions and classes the model wrote, and name what they cannot
keep. Real kernels, and the real `cave run --kernel` as a subprocess."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import yaml

from cave_tui.dataio import checkpoint_namespace, dump_namespace, load_dump, read_manifest
from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.session import SessionStore, read_session

CAVE = str(Path(sys.executable).with_name("cave"))
COUNT = 600  # past the kernel summary's cap of 500

DEFINING = """\
def bump(x):
    return x + 1

class Box:
    def size(self):
        return 3

gen = (i for i in range(3))
"""


def _values() -> str:
    return "\n".join(f"v{i} = {i}" for i in range(COUNT))


def _script(path: Path, replies: list[str]) -> str:
    path.write_text(yaml.safe_dump(replies))
    return f"scripted:{path}"


def _cave(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAVE, *args], cwd=cwd, capture_output=True, text=True, timeout=180)


def test_cave_run_kernel_dumps_and_resumes_every_variable_and_definition(tmp_path):
    model = _script(tmp_path / "m1.yaml", [f"```python\n{_values()}\n{DEFINING}```", "done"])
    first = _cave(
        "run", "make", "--model", model, "--kernel", "--dump", "out", "--sessions-dir", "s",
        cwd=tmp_path,
    )  # fmt: skip
    assert first.returncode == 0, first.stderr
    assert f"dumped {COUNT} variables" in first.stderr
    assert "kept as their source: bump, Box" in first.stderr and "gen (a generator" in first.stderr
    manifest = read_manifest(tmp_path / "out")
    assert len(manifest["variables"]) == COUNT
    assert [d["name"] for d in manifest["definitions"]] == ["bump", "Box"]
    session = SessionStore(tmp_path / "s").resolve("last")
    snapshot = [r for r in read_session(session).records if r["type"] == "snapshot"][-1]
    assert snapshot["variables"] == COUNT and snapshot["definitions"] == ["bump", "Box"]
    assert [s["name"] for s in snapshot["skipped"] if s["cause"] != "host"] == ["gen"]

    check = _script(
        tmp_path / "m2.yaml",
        ["```python\nprint(v0 + v599, bump(1), Box().size())\n```", "checked"],
    )
    again = _cave(
        "run", "check", "--model", check, "--kernel", "--sessions-dir", "s", "--resume", "last",
        "--json", cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    events = [json.loads(line) for line in again.stdout.splitlines()]
    assert any(e.get("output") == "599 2 3\n" for e in events)
    resumed = next(r for r in read_session(session).records if r["type"] == "resume")
    assert len(resumed["restored"]) == COUNT + 2
    assert [n["name"] for n in resumed["not_restored"]] == ["gen"]
    assert any("not restored: gen (not saved: a generator" in str(e) for e in events)


async def test_kernel_dumps_keep_definitions_and_name_what_they_lose(tmp_path):
    runtime = IPyKernelRuntime(cell_timeout=60)
    try:
        await runtime.start()
        await runtime.execute(f"{DEFINING}\nkept = [1, 2]\n")
        await dump_namespace(runtime, tmp_path / "d")
        await runtime.reset()
        loaded = await load_dump(runtime, tmp_path / "d")
        run = await runtime.execute("print(bump(1), Box().size(), kept)")
        assert run.output == "2 3 [1, 2]\n"
        assert loaded.not_restored == [
            {
                "name": "gen",
                "reason": "not saved: a generator: its paused state cannot be saved; "
                "create it again",
            }
        ]
        assert [d["name"] for d in read_manifest(tmp_path / "d")["definitions"]] == ["bump", "Box"]
        # A kernel set up by an older cave (attached) lacks the request: listed through summary.
        await runtime.execute("import _cave_kernel\ndel type(_cave_kernel.agent).op_persistable")
        assert await runtime.names() == ["kept", "bump", "Box"]
    finally:
        await runtime.stop()


async def test_kernel_snapshots_write_only_what_changed_and_name_what_they_cannot_keep(tmp_path):
    runtime = IPyKernelRuntime(cell_timeout=60)
    restored = IPyKernelRuntime(cell_timeout=60)
    try:
        await runtime.start()
        await runtime.execute(
            f"{_values()}\n{DEFINING}\ndef grow(x):\n    x.append(0)\n\nrows = [1]\n"
            "def make():\n    import socket\n    s = socket.socket()\n    return lambda: s\n"
            "closed = make()\n"
        )
        assert len(await runtime.names()) == COUNT + 7  # conflict checks see every name
        folder = tmp_path / "ns"
        first = await checkpoint_namespace(runtime, folder, changed=None)
        assert len(first.saved) == COUNT + 1
        assert {s["name"]: s["cause"] for s in first.skipped} == {
            "gen": "unsaveable",
            "closed": "not_retrieved",
        }
        assert "does not come back from the kernel safely" in first.summary()

        fetched: list[str] = []
        retrieve, retrieve_many = runtime.retrieve, runtime.retrieve_many

        async def counted(name):
            fetched.append(name)
            return await retrieve(name)

        async def counted_many(names):  # small values come many per round trip
            fetched.extend(names)
            return await retrieve_many(names)

        runtime.retrieve = counted  # type: ignore[method-assign]
        runtime.retrieve_many = counted_many  # type: ignore[method-assign]
        await runtime.execute("grow(rows)")  # in place, through a function: not reported
        second = await checkpoint_namespace(runtime, folder, changed=set())
        assert second.written == ["rows"] and fetched == ["rows"]
        await runtime.execute("v1 = Box()")  # now a value the kernel keeps to itself…
        third = await checkpoint_namespace(runtime, folder, changed={"v1"})
        (kept,) = [e for e in third.saved if e["name"] == "v1"]  # …so it pickles it itself
        assert kept["format"] == "dill" and "v1" not in {s["name"] for s in third.skipped}
        await runtime.execute("v1 = 1")
        await checkpoint_namespace(runtime, folder, changed={"v1"})

        await restored.start()
        loaded = await load_dump(restored, folder)
        assert len(loaded.names) == COUNT + 1 + 4  # the values, then bump, Box, grow, make
        run = await restored.execute("print(rows, v599, bump(1), Box().size())")
        assert run.output == "[1, 0] 599 2 3\n"
        assert sorted(n["name"] for n in loaded.not_restored) == ["closed", "gen"]
        dumped = await dump_namespace(restored, tmp_path / "again")
        assert len(dumped.saved) == COUNT + 1 and len(dumped.definitions) == 4
    finally:
        await runtime.stop()
        await restored.stop()
