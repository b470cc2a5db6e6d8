"""Issue 29, item 10 (scale): many small variables cross to and from the kernel many per
round trip (dump, snapshot, load), and the kernel's own checkpoint of them is taken in
linear time. Figures are in bench/dataio.py; these tests check the mechanism."""

from __future__ import annotations

from collections import Counter

import pandas as pd
import pytest

from cave_tui.dataio import DataIOError, checkpoint_namespace, dump_namespace, load_dump
from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.runtime.kernel.checkpoint import CheckpointStore

COUNT = 600
SETUP = f"""
import pandas as pd
for i in range({COUNT}):
    globals()[f"v{{i}}"] = [i, f"x{{i}}"]
frame = pd.DataFrame({{"a": [1, 2, 3]}})
class Made:
    pass
made = Made()
"""


def count_requests(runtime: IPyKernelRuntime) -> Counter[str]:
    """The ops the runtime sends to its kernel from now on, counted."""
    sup = runtime._sup
    seen: Counter[str] = Counter()
    real, bounded = sup.request, sup.bounded_request

    async def counted(op, data, *args, **kwargs):
        seen[op] += 1
        return await real(op, data, *args, **kwargs)

    async def counted_bounded(op, data, **kwargs):  # requests that may run model code
        seen[op] += 1
        return await bounded(op, data, **kwargs)

    sup.request, sup.bounded_request = counted, counted_bounded
    return seen


async def test_dump_snapshot_and_load_of_many_values_take_few_round_trips(tmp_path):
    source, target = IPyKernelRuntime(), IPyKernelRuntime()
    try:
        await source.start()
        await target.start()
        assert (await source.execute(SETUP)).success
        sent = count_requests(source)
        dumped = await dump_namespace(source, tmp_path / "dump")
        saved = {e["name"] for e in dumped.saved}
        assert saved >= {f"v{i}" for i in range(COUNT)} | {"frame"}
        # An instance of a class a cell wrote: pickled in the kernel, its bytes never read.
        assert {e["name"]: e["format"] for e in dumped.saved}["made"] == "dill"
        assert sent["retrieve"] <= 2 and sent["retrieve_many"] <= 4, sent
        sent.clear()
        await checkpoint_namespace(source, tmp_path / "snap", changed=None)
        assert sent["retrieve"] <= 2 and sent["retrieve_many"] <= 4, sent

        received = count_requests(target)
        loaded = await load_dump(target, tmp_path / "dump", hold_back=True)
        assert saved - {"made"} <= set(loaded.names)  # with pd (a module) and Made (source)
        assert [held["name"] for held in loaded.held] == ["made"]  # a pickle needs --trust
        assert received["inject"] <= 1 and received["inject_many"] <= 4, received
        assert await target.retrieve(f"v{COUNT - 1}") == [COUNT - 1, f"x{COUNT - 1}"]
        pd.testing.assert_frame_equal(
            await target.retrieve("frame"), pd.DataFrame({"a": [1, 2, 3]})
        )

        # One value the kernel cannot build, in the middle of a batch: nothing is loaded.
        await target.execute(  # (a reset would inject the loaded values again: the host's)
            "for _n in [n for n in globals() if n[:1] == 'v' or n == 'frame']:\n"
            "    del globals()[_n]"
        )
        refuse = (
            "import _cave_kernel\n_A = type(_cave_kernel.agent)\n_real = _A.op_inject\n"
            "def _refuse(self, data, buffers):\n"
            "    if data['name'] == 'v300':\n        raise ValueError('cannot build it')\n"
            "    return _real(self, data, buffers)\n_A.op_inject = _refuse\n"
        )
        assert (await target.execute(refuse)).success
        with pytest.raises(DataIOError, match=r"v300 could not be restored.*nothing was loaded"):
            await load_dump(target, tmp_path / "dump", hold_back=True)
        for name in ("v0", "v300", "v599", "frame"):
            with pytest.raises(KeyError):
                await target.retrieve(name)
    finally:
        await source.stop()
        await target.stop()


def test_the_kernel_checkpoint_store_sums_its_bytes_once_per_reply(monkeypatch):
    store = CheckpointStore(budget=1000)
    store.store({"entries": [{"name": "old", "codec": "json", "buffers": [0]}]}, [b"x" * 100])
    sums = []
    real = CheckpointStore.used
    monkeypatch.setattr(CheckpointStore, "used", lambda self, *a: sums.append(1) or real(self, *a))
    entries = [{"name": f"n{i}", "codec": "json", "buffers": [i]} for i in range(3_000)]
    store.store({"entries": entries}, [b"y" * 1] * 3_000)
    assert len(sums) == 1  # it was once per entry: 3,000 sums of up to 3,000 entries
    # The budget still holds: 100 bytes for "old", then one byte a name until 1,000.
    assert store.used() == 1000 and len(store.entries) == 901
    assert store.unsaved["n2999"] == "over the checkpoint budget"
