"""Issue 31: `/retrieve clf clf.pkl` of a value the kernel keeps to itself (a fitted model, an
instance of a class a cell wrote) was refused. The file is written from the kernel's own
pickle, bytes the host never unpickles; retrieving it into the host still refuses."""

from __future__ import annotations

import pytest
import pytest_asyncio

from cave_tui import CaveAgent
from cave_tui.app.commands import load_commands
from cave_tui.models import ScriptedModel
from cave_tui.runtime.kernel import IPyKernelRuntime
from tests.helpers.front_end import RecordingContext

pytestmark = pytest.mark.asyncio(loop_scope="module")

CELL = """
class Model:
    def __init__(self, coef):
        self.coef = coef

    def __setstate__(self, state):  # proof of where it is unpickled
        import os
        with open({marks!r}, "a") as f:
            f.write(f"{{os.getpid()}}\\n")
        self.__dict__.update(state)

clf = Model([0.5, 2.0])
"""


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def kernel():
    runtime = IPyKernelRuntime(cell_timeout=60)
    await runtime.start()
    yield runtime
    await runtime.stop()


async def test_retrieve_to_a_file_writes_the_kernels_pickle_unread(kernel, tmp_path, monkeypatch):
    import dill

    monkeypatch.chdir(tmp_path)
    marks = tmp_path / "unpickled.txt"
    await kernel.reset()
    assert (await kernel.execute(CELL.format(marks=str(marks)))).success
    ctx = RecordingContext(CaveAgent(ScriptedModel([]), kernel))
    registry = load_commands()

    assert await registry.dispatch("/retrieve clf clf.pkl", ctx)
    said = ctx.last
    assert "Saved `clf` (Model) to clf.pkl" in said and "dill" in said, said
    assert "kernel's own pickle" in said and "runs code" in said, said
    data = (tmp_path / "clf.pkl").read_bytes()
    assert data == (await kernel.retrieve_pickled("clf")).pickled.data
    assert not marks.exists(), "the host unpickled it"
    assert [n for n in tmp_path.iterdir() if n.name.startswith(".")] == []  # no temp left

    assert await registry.dispatch("/retrieve clf", ctx)  # the default folder, its format
    assert (tmp_path / "retrieved" / "clf.dill").read_bytes() == data

    assert not await registry.dispatch("/retrieve clf clf.json", ctx)
    assert "only its pickle can be written" in ctx.last and not (tmp_path / "clf.json").exists()

    with pytest.raises(TypeError):  # into the host: refused, as before
        await kernel.retrieve("clf")
    assert not marks.exists()
    assert dill.loads(data).coef == [0.5, 2.0]  # what the user does once they trust it
    assert marks.read_text().split() != []
