"""Dumps and session snapshots record where they came from (issue 30, item 5).

A function's source in a dump is the host's copy of a cell it sent, never the kernel's
word for it; a dump or snapshot written from a kernel runs its code (sources, pickles) in
the less confined in-process runtime (the host) only with trust. Every forged source here
writes a marker file when it runs: the tests assert on that file.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import pytest_asyncio

from cave_tui.agent import CaveAgent
from cave_tui.dataio import TrustRequiredError, dump_namespace, load_dump
from cave_tui.models import ScriptedModel
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.runtime.provenance import Provenance
from cave_tui.session import SessionRecorder, check_snapshot, resume_session
from cave_tui.session.seal import META_KEY
from cave_tui.session.store import read_meta

pytestmark = pytest.mark.asyncio(loop_scope="module")

DEFINED = "def f(a):\n    return a + 1\n"
FORGED_FILE = "<cave-forged>"


def forging_cell(marker: Path) -> str:
    """A cell that makes `g` with an innocent body, then makes the kernel report a source
    for it that writes *marker* when it is run again (a default value runs at definition)."""
    forged = f"def g(x=open({str(marker)!r}, 'w').write('ran')):\n    return 2\n"
    return (
        "import linecache as _lc\n"
        f"exec(compile('def g():\\n    return 2\\n', {FORGED_FILE!r}, 'exec'))\n"
        f"_forged = {forged!r}\n"
        f"_lc.cache[{FORGED_FILE!r}] = "
        f"(len(_forged), None, _forged.splitlines(True), {FORGED_FILE!r})\n"
    )


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel():
    runtime = IPyKernelRuntime(cell_timeout=60)
    await runtime.start()
    yield runtime
    await runtime.stop()


async def _kernel_dump(kernel: IPyKernelRuntime, tmp_path: Path) -> tuple[Path, Path]:
    """A dump of a kernel holding `f` (a cell the host sent), a forged `g`, and `n`."""
    marker = tmp_path / "forged-ran"
    await kernel.reset()
    for cell in (DEFINED, forging_cell(marker), "n = 5"):
        result = await kernel.execute(cell)
        assert result.success, result.error_text
    target = tmp_path / "dump"
    await dump_namespace(kernel, target)
    return target, marker


def _manifest(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text())


async def test_a_kernel_dump_keeps_the_hosts_source_and_marks_the_forged_one(kernel, tmp_path):
    target, marker = await _kernel_dump(kernel, tmp_path)
    manifest = _manifest(target)
    assert manifest["provenance"] == "kernel"
    by_name = {d["name"]: d for d in manifest["definitions"]}
    assert by_name["f"]["source"] == DEFINED and by_name["f"]["origin"] == "sent"
    assert by_name["g"]["origin"] == "reported"  # the kernel's word only
    assert "forged-ran" in by_name["g"]["source"]
    # Loaded back into a kernel (as confined as the one that wrote it): `f` needs no
    # question, the source the host never sent does, like a pickle.
    await kernel.reset()
    with pytest.raises(TrustRequiredError, match=r"functions and classes \(g\)"):
        await load_dump(kernel, target)
    dump = await load_dump(kernel, target, hold_back=True)
    assert set(dump.names) == {"n", "f"} and not marker.exists()
    assert [n["name"] for n in dump.not_restored] == ["g"]
    assert "not trusted" in dump.not_restored[0]["reason"]


async def test_a_forged_kernel_source_never_runs_in_the_host_without_trust(kernel, tmp_path):
    target, marker = await _kernel_dump(kernel, tmp_path)
    host = IPythonRuntime()
    with pytest.raises(TrustRequiredError) as caught:
        await load_dump(host, target)
    message = str(caught.value)
    assert "functions and classes (f, g)" in message and "--trust" in message
    assert "written by a kernel" in message and "less confined" in message
    assert not marker.exists() and "f" not in await host.names()
    held = await load_dump(host, target, hold_back=True)
    assert held.names == ["n"] and not marker.exists()
    assert sorted(n["name"] for n in held.not_restored) == ["f", "g"]
    # With trust, the user's choice: the forged code runs (the marker proves it ran here).
    trusted = await load_dump(IPythonRuntime(), target, trust=True)
    assert set(trusted.names) == {"n", "f", "g"} and marker.read_text() == "ran"


async def test_an_in_process_dump_loads_in_process_with_no_question(tmp_path):
    runtime = IPythonRuntime()
    cell = "import math\n\n" + DEFINED + "\nclass Box:\n    size = 3\n\nsq = lambda v: v * v\n"
    assert (await runtime.execute(cell)).success
    assert (await runtime.execute("if True:\n    def h():\n        return 7\n")).success
    magic = "%time y = 2\ndef k():\n    return 4\n"  # IPython's, not Python: transformed
    assert (await runtime.execute(magic)).success
    target = tmp_path / "dump"
    await dump_namespace(runtime, target)
    manifest = _manifest(target)
    assert manifest["provenance"] == "in-process"
    by_name = {d["name"]: d for d in manifest["definitions"]}
    assert by_name["f"]["source"] == DEFINED
    assert by_name["Box"]["source"] == "class Box:\n    size = 3\n"
    assert by_name["sq"]["source"] == "sq = lambda v: v * v\n"
    assert by_name["h"]["source"] == "def h():\n    return 7\n"  # inside a block, dedented
    assert by_name["k"]["source"] == "def k():\n    return 4\n"
    assert {d["origin"] for d in by_name.values()} == {"sent"}
    fresh = IPythonRuntime()
    dump = await load_dump(fresh, target)
    assert {"f", "Box", "sq", "h", "k", "math"} <= set(dump.names) and not dump.not_restored
    result = await fresh.execute("print(f(1), Box.size, sq(3), h(), k())")
    assert result.output == "2 3 9 7 4\n"


async def test_a_dump_without_the_mark_needs_trust_for_code_in_process(kernel, tmp_path):
    runtime = IPythonRuntime()
    assert (await runtime.execute(DEFINED + "n = 5\n")).success
    target = tmp_path / "dump"
    await dump_namespace(runtime, target)
    manifest = _manifest(target)
    del manifest["provenance"]
    for entry in manifest["definitions"]:
        del entry["origin"]
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(TrustRequiredError, match="does not say where it was written"):
        await load_dump(IPythonRuntime(), target)
    assert (await load_dump(IPythonRuntime(), target, trust=True)).names == ["n", "f"]
    await kernel.reset()  # a kernel: the old dump's definitions load as they always did
    assert (await load_dump(kernel, target)).names == ["n", "f"]


async def test_an_unknown_provenance_is_refused_with_the_manifest(tmp_path):
    runtime = IPythonRuntime()
    assert (await runtime.execute("n = 5\n")).success
    target = tmp_path / "dump"
    await dump_namespace(runtime, target)
    manifest = _manifest(target)
    manifest["provenance"] = "the-moon"
    (target / "manifest.json").write_text(json.dumps(manifest))
    with pytest.raises(Exception, match="provenance: unknown value 'the-moon'"):
        await load_dump(IPythonRuntime(), target)


POINT = """
class Point:
    def __setstate__(self, state):  # proof of where it is unpickled
        open({marker!r}, "w").write("unpickled")
        self.__dict__.update(state)

p = Point()
p.x = 1
"""


async def test_a_kernel_session_resumes_in_process_only_with_trust(kernel, tmp_path):
    marker, unpickled = tmp_path / "forged-ran", tmp_path / "unpickled"
    await kernel.reset()
    cell = DEFINED + "n = 5\n" + POINT.format(marker=str(unpickled))
    replies = [f"```python\n{cell}```", f"```python\n{forging_cell(marker)}```", "done"]
    agent = CaveAgent(ScriptedModel(replies), kernel)
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    await recorder.run("define things")
    await recorder.close()
    snapshot = _manifest(recorder.namespace_dir)
    assert snapshot["provenance"] == "kernel" and read_meta(recorder.dir).get(META_KEY)
    # Sealed by this cave, yet written by a kernel: the host asks before running its code.
    # (a kernel resuming it asks nothing: the seal vouches for what this cave wrote there)
    assert check_snapshot(recorder.dir, Provenance.KERNEL) == []
    assert sorted(check_snapshot(recorder.dir)) == ["Point", "f", "g", "p"]
    fresh = CaveAgent(ScriptedModel(["ok"]), IPythonRuntime())
    result = await resume_session(recorder.dir, fresh)
    assert "n" in result.restored and not marker.exists() and not unpickled.exists()
    assert sorted(n["name"] for n in result.not_restored) == ["Point", "f", "g", "p"]
    await result.recorder.close()  # its snapshot keeps them, for a resume with trust
    held = _manifest(recorder.namespace_dir)
    assert held["provenance"] == "in-process"
    assert {d["name"]: d["origin"] for d in held["definitions"]} == {
        "f": "reported",
        "Point": "reported",
        "g": "reported",
    }
    again = CaveAgent(ScriptedModel(["ok"]), IPythonRuntime())
    assert sorted(check_snapshot(recorder.dir)) == ["Point", "f", "g", "p"]
    result = await resume_session(recorder.dir, again, trust=True)
    assert {"n", "f", "g", "p"} <= set(result.restored) and marker.read_text() == "ran"
    assert unpickled.read_text() == "unpickled"
    await result.recorder.close()


async def test_confinement_order():
    inside, kernel, sandboxed = list(Provenance)
    assert sandboxed.escapes_into(kernel) and sandboxed.escapes_into(inside)
    assert kernel.escapes_into(inside) and not kernel.escapes_into(sandboxed)
    assert not inside.escapes_into(inside) and not inside.escapes_into(kernel)
