"""Objects whose own methods never return (issue 29, items 4 and 5), in a real kernel.

Around every cell the kernel's hooks look at every name; after it, the host checkpoints
what changed. A model-written `__len__`, `__sizeof__` or `__getstate__` that never returns
must cost at most a bounded wait (timeout, interrupt, restart), and a restart must name
every variable it could not bring back.
"""

from __future__ import annotations

import asyncio
import time

import pytest

from tests.helpers.hanging import LAZY
from tests.runtime.kernel.conftest import make_runtime

PICKLING_HANGS = """
class Sticky:
    def __getstate__(self):
        while True:
            pass
sticky = Sticky()
after = 1
"""

PICKLING_STUCK_IN_C = """
import hashlib
class Stuck:
    def __reduce__(self):
        hashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)
stuck = Stuck()
"""


@pytest.fixture(scope="module")
def hangs():
    runtime = make_runtime(cell_timeout=2, interrupt_grace=0.5)
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


@pytest.fixture
async def rt(hangs):
    await hangs.reset()
    return hangs


async def test_an_object_whose_len_hangs_costs_no_cell_its_timeout(rt):
    assert (await rt.execute("x = 41")).success
    started = time.monotonic()
    made = await rt.execute(LAZY)
    assert made.success and set(made.changed) == {"Lazy", "lazy"}, made.error_text
    later = await rt.execute("y = 5")
    assert later.success and later.changed == ["y"], later.error_text
    total = await rt.execute("print(x + y)")
    assert total.output == "46\n", total.error_text
    assert time.monotonic() - started < 6  # no cell waited for its 2 s timeout


async def test_a_getstate_that_hangs_stops_the_checkpoint_not_cave(rt):
    assert (await rt.execute("x = 41")).success
    assert (await rt.execute(PICKLING_HANGS)).success
    started = time.monotonic()
    later = await rt.execute("y = 5")  # waits for the checkpoint: bounded, then interrupted
    assert later.success, later.error_text
    assert time.monotonic() - started < 10
    report = await rt.restart()
    assert "sticky (" in report and "No variables were lost" not in report
    assert "x" in report.split("Restored from the last checkpoint:")[1]


async def test_a_getstate_stuck_in_native_code_costs_a_restart_that_names_the_loss(rt):
    assert (await rt.execute("x = 41")).success
    assert (await rt.execute(PICKLING_STUCK_IN_C)).success
    started = time.monotonic()
    later = await rt.execute("print(x)")  # the checkpoint is killed with its kernel
    assert time.monotonic() - started < 20
    notice = later.notice or ""
    assert "stuck (its checkpoint was stopped)" in notice.split("Lost:")[1], notice
    assert "No variables were lost" not in notice
    assert later.output == "41\n", later.error_text


async def test_a_killed_cell_names_what_it_bound_as_lost(rt):
    assert (await rt.execute("x = 41")).success
    killed = await rt.execute(
        "y = 5\nimport hashlib\nhashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)"
    )
    assert killed.timed_out
    notice = killed.notice or ""
    assert "y (bound by the cell that was stopped)" in notice, notice
    assert "No variables were lost" not in notice
    assert (await rt.execute("print(x)")).output == "41\n"
