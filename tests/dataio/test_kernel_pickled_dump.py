"""Values the kernel keeps to itself (instances of classes a cell wrote) are dumped as the dill
bytes the kernel makes of them: the host writes and hashes those bytes and never unpickles
them; `--trust` loads them back in a kernel (after the sha256 check), without it they are
held back and named."""

from __future__ import annotations

import hashlib
import json

import pytest
import pytest_asyncio

from cave_tui.dataio import DataIOError, TrustRequiredError, dump_namespace, load_dump
from cave_tui.runtime.kernel import IPyKernelRuntime

pytestmark = pytest.mark.asyncio(loop_scope="module")

CELL = """
class Point:
    def __init__(self, x, y):
        self.x, self.y = x, y

    def __setstate__(self, state):  # proof of where it is unpickled
        import os
        with open("unpickled.txt", "a") as f:
            f.write(f"{os.getpid()}\\n")
        self.__dict__.update(state)

p = Point(3, 4)
n = 5
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel():
    runtime = IPyKernelRuntime(cell_timeout=60)
    await runtime.start()
    yield runtime
    await runtime.stop()


async def _in_kernel(kernel: IPyKernelRuntime, expression: str) -> object:
    result = await kernel.execute(f"_probe = {expression}")
    assert result.success, result.error_text
    return await kernel.retrieve("_probe")


async def test_the_kernel_pickles_what_cannot_come_back_and_trust_loads_it_there(
    kernel, tmp_path, monkeypatch
):
    monkeypatch.chdir(tmp_path)  # a host-side unpickling would leave unpickled.txt here
    await kernel.reset()
    assert (await kernel.execute(CELL)).success
    with pytest.raises(TypeError):
        await kernel.retrieve("p")  # it does not come back to the host
    target = tmp_path / "d"
    result = await dump_namespace(kernel, target)
    assert [s["name"] for s in result.skipped] == []
    manifest = json.loads((target / "manifest.json").read_text())
    (entry,) = [e for e in manifest["variables"] if e["name"] == "p"]
    assert entry["format"] == "dill" and entry["type"] == "Point"
    data = (target / entry["file"]).read_bytes()
    assert entry["sha256"] == hashlib.sha256(data).hexdigest() and entry["bytes"] == len(data)
    assert not (tmp_path / "unpickled.txt").exists()

    # Without trust: held back and named; the rest loads.
    await kernel.reset()
    with pytest.raises(TrustRequiredError, match=r"pickled objects \(p\)"):
        await load_dump(kernel, target)
    held = await load_dump(kernel, target, hold_back=True)
    assert [n["name"] for n in held.not_restored] == ["p"]
    assert await kernel.retrieve("n") == 5
    assert await _in_kernel(kernel, "'p' in dir()") is False

    # With trust: unpickled in the kernel, never here.
    await kernel.reset()
    await load_dump(kernel, target, trust=True)
    assert await _in_kernel(kernel, "[p.x, p.y]") == [3, 4]
    marks = await _in_kernel(kernel, "open('unpickled.txt').read().split()")
    assert marks == [str(kernel.kernel_pid)]
    assert not (tmp_path / "unpickled.txt").exists()

    # Bytes that do not match the sha256 the host recorded are never unpickled.
    tampered = bytearray(data)
    tampered[-2] ^= 0xFF
    (target / entry["file"]).write_bytes(bytes(tampered))
    await kernel.reset()
    with pytest.raises(DataIOError, match="does not match its sha256"):
        await load_dump(kernel, target, trust=True)


async def test_a_snapshot_pickles_the_values_the_kernel_keeps_in_one_round_trip(
    kernel, tmp_path, monkeypatch
):
    """200 instances of a cell's class: one `pickle_many` request, not one (or two) each."""
    from cave_tui.dataio.checkpoint import checkpoint_namespace
    from cave_tui.runtime.kernel.supervisor import KernelSupervisor

    await kernel.reset()
    cell = "class Cell:\n    def __init__(self, x):\n        self.x = x\n"
    cell += "\n".join(f"c{i} = Cell({i})" for i in range(200))
    assert (await kernel.execute(cell)).success
    asked: list[str] = []
    bounded = KernelSupervisor.bounded_request

    async def counted(self, op, *args, **kwargs):
        asked.append(op)
        return await bounded(self, op, *args, **kwargs)

    monkeypatch.setattr(KernelSupervisor, "bounded_request", counted)
    result = await checkpoint_namespace(kernel, tmp_path / "snap", sync=False)
    cells = [e for e in result.saved if e["name"][0] == "c" and e["name"][1:].isdigit()]
    assert len(cells) == 200 and not result.skipped
    assert {e["format"] for e in cells} == {"dill"}
    assert asked.count("pickle_many") == 1 and "pickle" not in asked
    assert asked.count("retrieve") == 0
