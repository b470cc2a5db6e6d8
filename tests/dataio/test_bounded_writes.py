"""Saving a value runs its own code (`__getstate__`, `__reduce__`) on the host: every write of
a dump or snapshot is bounded (issue 29, item 5), so a value that never pickles is left out,
with the reason, and the rest is saved."""

from __future__ import annotations

import asyncio
import json
import time

from cave_tui.dataio.dump import _Writer, dump_namespace
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.watched import HUNG


class Loops:
    def __getstate__(self):
        while True:
            pass


class Sleeps:  # stuck where no interrupt reaches (a C call): the write is abandoned
    def __getstate__(self):
        time.sleep(20)
        return {}


def _write(folder, items, limit):
    """Each (object, pickled size or None, name) through one writer; the outcomes."""

    async def go():
        writer = _Writer(folder, sync=False, limit=limit)
        for key, (obj, size, name) in enumerate(items):
            await writer.add(key, obj, name, name, size)
        return await writer.finish()

    return asyncio.run(asyncio.wait_for(go(), 60))


def test_a_write_that_loops_is_stopped_and_the_rest_of_its_batch_is_saved(tmp_path):
    loops = Loops()
    items = [([1, 2], 10, "a"), (loops, 10, "b"), ({"k": 3}, 10, "c")]
    started = time.monotonic()
    outcomes = _write(tmp_path, items, 0.5)
    assert time.monotonic() - started < 20
    assert [o.entry is not None for o in outcomes] == [True, False, True]
    assert "saving it took over 0.5 s (it was stopped" in (outcomes[1].error or "")
    assert loops in HUNG  # not tried again: the next write of it is refused at once
    started = time.monotonic()
    (again,) = _write(tmp_path, [(loops, None, "d")], 5)
    assert again.entry is None and time.monotonic() - started < 2


def test_a_write_stuck_in_native_code_is_abandoned(tmp_path):
    started = time.monotonic()
    (outcome,) = _write(tmp_path, [(Sleeps(), None, "s")], 0.5)
    assert time.monotonic() - started < 10
    assert outcome.entry is None and "abandoned" in (outcome.error or "")


def test_a_dump_in_process_leaves_out_a_value_that_never_pickles(tmp_path, monkeypatch):
    monkeypatch.setattr("cave_tui.runtime.ipython.PERSIST_OBJECT_BUDGET", 0.3)  # its digest
    runtime = IPythonRuntime(security_checker=None, cell_timeout=1)

    async def go():
        await runtime.start()
        code = "class Sticky:\n    def __getstate__(self):\n        while True: pass\n"
        await runtime.execute(code + "x = 41\nsticky = Sticky()\ny = [5]")
        try:
            return await asyncio.wait_for(dump_namespace(runtime, tmp_path / "d", sync=False), 60)
        finally:
            await runtime.stop()

    started = time.monotonic()
    result = asyncio.run(go())
    assert time.monotonic() - started < 30
    assert set(result.names) >= {"x", "y"}
    manifest = json.loads((tmp_path / "d" / "manifest.json").read_text())
    (skipped,) = [s for s in manifest["skipped"] if s["name"] == "sticky"]
    assert "took over 1 s" in skipped["reason"]
