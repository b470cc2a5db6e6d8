"""The kernel runtime's seams, with real kernels: how a cell ended (`CellOutcome`), and the
two kinds of kernel: an owned one is killed and restarted at will, an attached one never."""

from __future__ import annotations

import asyncio
import os
import signal
import sys
from pathlib import Path

import pytest
from jupyter_client.manager import KernelManager

from cave_tui.runtime.kernel import CellOutcome, IPyKernelRuntime, KernelDiedError
from cave_tui.runtime.kernel.install import bootstrap_sources, kernel_source
from cave_tui.runtime.kernel.kinds import AttachedKernel, OwnedKernel
from cave_tui.runtime.kernel.process import LAUNCHER, KernelExit
from cave_tui.runtime.kernel.settings import KernelSettings
from tests.runtime.kernel.conftest import make_runtime

# Holds the GIL in C for minutes: SIGINT cannot land, so only a kill stops it.
IGNORES_INTERRUPT = "import hashlib\nhashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)"


@pytest.fixture(scope="module")
def owned():
    runtime = make_runtime(interrupt_grace=0.5)
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


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


@pytest.fixture
async def attached(manager):
    runtime = IPyKernelRuntime(
        connection_file=manager.connection_file, interrupt_grace=0.5, cell_timeout=60
    )
    await runtime.start()
    yield runtime
    await runtime.stop()


# -- CellOutcome ------------------------------------------------------------------------------


async def test_a_finished_cell_is_done_even_when_it_raised(owned):
    assert (await owned.execute("x = 1")).success
    assert owned.last_outcome is CellOutcome.DONE
    failed = await owned.execute("1 / 0")
    assert failed.error_type == "ZeroDivisionError" and owned.last_outcome is CellOutcome.DONE


async def test_a_kernel_killed_under_a_cell_makes_it_died_and_is_restarted(owned):
    await owned.execute("kept = 7")
    assert "kept" in await owned.names()  # also waits for the cell's checkpoint
    old = owned.kernel_pid
    assert old is not None
    task = asyncio.create_task(owned.execute("import time\ntime.sleep(60)"))
    await asyncio.sleep(0.5)
    os.kill(old, signal.SIGKILL)
    result = await asyncio.wait_for(task, 30)
    assert owned.last_outcome is CellOutcome.DIED and result.error_type == "KernelDied"
    assert owned.kernel_pid not in (None, old)
    assert await owned.retrieve("kept") == 7


async def test_a_cell_that_ignores_the_interrupt_is_killed_with_its_owned_kernel(owned):
    old = owned.kernel_pid
    result = await owned.execute(IGNORES_INTERRUPT, timeout=0.5)
    assert owned.last_outcome is CellOutcome.KILLED
    assert result.error_type == "Timeout" and "killed and restarted" in (result.error_text or "")
    assert owned.kernel_pid not in (None, old)


async def test_no_outcome_when_the_last_execute_found_no_kernel():
    runtime = IPyKernelRuntime(connection_file="/nonexistent/kernel.json")
    try:
        result = await runtime.execute("1")
        assert result.error_type == "KernelUnavailable" and runtime.last_outcome is None
    finally:
        await runtime.stop()


# -- the owned kind ---------------------------------------------------------------------------


async def test_an_owned_kernel_restarts_on_request_with_its_state(owned):
    await owned.execute("here = 'yes'")
    old = owned.kernel_pid
    report = await owned.restart()
    assert "restarted on request" in report and "here" in report
    assert owned.kernel_pid not in (None, old)
    assert await owned.retrieve("here") == "yes"


async def test_a_requested_kill_is_the_hosts_own_act_not_a_crash(owned):
    async def kill() -> KernelExit:
        proc = owned._kind.process
        assert proc is not None and proc.exited is not None
        assert proc.request_kill()
        return await proc.exited

    info = await owned._call(kill())
    assert info.requested and not info.oom_killed
    result = await owned.execute("print('back')")  # the next call brings a kernel back
    assert result.output == "back\n" and "restarted" in (result.notice or "")


def test_each_kind_says_whether_it_may_kill_and_what_a_lost_kernel_means():
    owned, attached = OwnedKernel(KernelSettings()), AttachedKernel("/x.json")
    assert owned.owned and owned.kill() and owned.lost_outcome is CellOutcome.DIED
    assert not attached.owned and not attached.kill()
    assert attached.lost_outcome is CellOutcome.LOST
    assert attached.auto_memory_limit() is None and attached.resolve_user("auto") is None


# -- the attached kind ------------------------------------------------------------------------


async def test_an_attached_kernel_is_not_restarted_and_keeps_its_state(attached, manager):
    await attached.execute("kept = 1")
    pid = manager.provisioner.pid
    with pytest.raises(KernelDiedError, match="cannot restart an attached kernel"):
        await attached.restart()
    assert manager.is_alive() and manager.provisioner.pid == pid
    assert attached.kernel_pid is None and attached.runtime_dir is None
    assert await attached.retrieve("kept") == 1


async def test_stopping_an_attached_runtime_leaves_its_kernel_running(manager):
    first = IPyKernelRuntime(connection_file=manager.connection_file)
    await first.start()
    await first.execute("left = 'behind'")
    await first.stop()
    assert manager.is_alive()
    second = IPyKernelRuntime(connection_file=manager.connection_file)
    try:
        assert await second.retrieve("left") == "behind"
    finally:
        await second.stop()


async def test_an_attached_cell_that_ignores_the_interrupt_is_stuck_not_killed(attached, manager):
    pid = manager.provisioner.pid
    result = await attached.execute(IGNORES_INTERRUPT, timeout=0.5)
    assert attached.last_outcome is CellOutcome.STUCK
    assert result.timed_out and "cannot kill an attached kernel" in (result.error_text or "")
    assert manager.is_alive() and manager.provisioner.pid == pid
    # The kernel stays busy with that cell; the manager's teardown shuts it down.


# -- the package as shipped -------------------------------------------------------------------


def test_the_launcher_and_the_shipped_sources_are_found_in_the_package():
    """The launcher runs as a script from the package's folder (its modules must not shadow
    the standard library there), and the kernel gets the runtime's side as source text."""
    here = Path(LAUNCHER).parent
    assert Path(LAUNCHER).is_file() and here.name == "shipped"
    shadowing = {p.stem for p in here.glob("*.py")} & set(sys.stdlib_module_names)
    assert not shadowing
    sources = bootstrap_sources()
    # Each module's text as shipped: its imports of other shipped modules renamed to the
    # kernel's names (`_cave_lazy`), nothing else changed, and no `cave_tui` import left.
    for name, stem in (("_cave_transport", "transport"), ("_cave_kernel", "bootstrap")):
        text = (here / f"{stem}.py").read_text()
        assert sources[name] == kernel_source(stem, text)
        assert len(sources[name].splitlines()) == len(text.splitlines())
    for name, text in sources.items():
        assert "cave_tui" not in "".join(
            line for line in text.splitlines() if line.lstrip().startswith(("import", "from"))
        ), name
        compile(text, f"<{name}>", "exec")
