"""`connection_file=`: attaching to a kernel someone else started (here: jupyter_client's
KernelManager, the way a Jupyter server or an SSH-tunnelled remote kernel would)."""

from __future__ import annotations

import asyncio
import time

import pandas as pd
import pytest
from jupyter_client.manager import KernelManager

from cave_tui.runtime import Function, Variable
from cave_tui.runtime.kernel import IPyKernelRuntime


def triple(x: int) -> int:
    return 3 * x


@pytest.fixture(scope="module")
def manager():
    km = KernelManager()
    km.start_kernel()
    client = km.client()
    client.start_channels()
    client.wait_for_ready(timeout=60)
    client.stop_channels()
    yield km
    if km.is_alive():
        km.shutdown_kernel(now=True)


@pytest.fixture(scope="module")
def attached(manager):
    runtime = IPyKernelRuntime(
        connection_file=manager.connection_file, interrupt_grace=1.0, cell_timeout=60
    )
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


async def test_attach_runs_cells_and_moves_values(attached, manager):
    assert attached.kernel_pid is None  # not ours: no process to kill
    assert attached.kernel_info["pid"] == manager.provisioner.pid
    attached.inject(Variable("frame", pd.DataFrame({"v": [1, 2]})))
    await attached.ainject(Function(triple))
    result = await attached.execute("frame['w'] = frame.v.map(triple)\ntotal = int(frame.w.sum())")
    assert result.success, result.error_text
    assert await attached.retrieve("total") == 9
    pd.testing.assert_frame_equal(
        await attached.retrieve("frame"), pd.DataFrame({"v": [1, 2], "w": [3, 6]})
    )
    rows = {r.name for r in await attached.namespace_summary()}
    assert {"frame", "triple", "total"} <= rows


async def test_timeout_interrupts_through_the_control_channel(attached):
    result = await attached.execute("import time\ntime.sleep(30)", timeout=0.5)
    assert result.timed_out and result.interrupted and result.error_type == "Timeout"
    assert (await attached.execute("print('after')")).output == "after\n"


async def test_kernel_restarted_by_its_owner_gets_the_state_back(attached, manager):
    await attached.execute("kept = [1, 2, 3]")
    assert "kept" in await attached.names()  # the checkpoint is in
    await asyncio.to_thread(manager.restart_kernel, now=True)  # same ports, new process
    result = await attached.execute("print(sum(kept))")
    assert result.output == "6\n", result
    assert "restored" in (result.notice or "").lower()
    assert (
        await attached.retrieve("total") == 9
        and (await attached.execute("triple(2)")).output == "6\n"
    )


async def test_a_cell_that_ignores_the_interrupt_is_reported_not_waited_for(attached):
    """An attached kernel cannot be killed: the result says so and returns."""
    result = await attached.execute(
        "import hashlib\nhashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)", timeout=0.5
    )
    assert result.timed_out and result.error_type == "Timeout"
    assert "cannot kill an attached kernel" in result.error_text


async def test_kernel_gone_mid_cell_is_reported_quickly(attached, manager):
    task = asyncio.create_task(attached.execute("import time\ntime.sleep(60)"))
    await asyncio.sleep(0.5)
    started = time.monotonic()
    await asyncio.to_thread(manager.shutdown_kernel, now=True)
    result = await asyncio.wait_for(task, 20)
    assert time.monotonic() - started < 10  # the heartbeat, not the 60 s cell timeout
    assert result.error_type == "KernelDied"
    after = await attached.execute("1")
    assert not after.success and after.error_type == "KernelUnavailable"
    assert "cannot restart a kernel it did not start" in after.error_text
