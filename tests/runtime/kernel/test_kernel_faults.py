"""Faults that kill or wedge a real kernel. The host survives each one, the runtime is
usable afterwards, and the model is told what happened and what was lost.

One runtime serves the module (each fault restarts its kernel); its limits are small
so the faults stay cheap and cannot hurt the machine: 500 MB of address space, 64
tasks (pids cgroup, or RLIMIT_NPROC for an unprivileged kernel), a 0.5 s grace after
an interrupt.
"""

from __future__ import annotations

import asyncio
import os
import resource
import signal
import time
from pathlib import Path

import pandas as pd
import pytest

from cave_tui.runtime import Variable
from tests.runtime.kernel.conftest import make_runtime

MAX_PROCESSES = 64


@pytest.fixture(scope="module")
def faulty():
    runtime = make_runtime(
        memory_limit="500M",
        max_processes=MAX_PROCESSES,
        interrupt_grace=0.5,
        checkpoint_bytes="64M",
    )
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


@pytest.fixture
async def rt(faulty):
    await faulty.reset()
    return faulty


STATE = """
import json as js
import pandas as pd
def helper(x):
    return x * 3
class Box:
    def __init__(self, v):
        self.v = v
a = 1
frame = pd.DataFrame({'k': [1, 2, 3]})
box = Box(7)
gen = (i for i in range(3))
"""


async def _assert_state_back(rt) -> None:
    check = await rt.execute("print(a, helper(2), box.v, js.dumps([1]), int(frame.k.sum()))")
    assert check.success, check.error_text
    assert check.output == "1 6 7 [1] 6\n"
    pd.testing.assert_frame_equal(await rt.retrieve("frame"), pd.DataFrame({"k": [1, 2, 3]}))


async def test_os_exit_is_detected_at_once_and_state_is_restored(rt):
    assert (await rt.execute(STATE)).success
    old = rt.kernel_pid
    started = time.monotonic()
    result = await rt.execute("import os\nos._exit(1)")
    assert time.monotonic() - started < 10  # detection is immediate; the rest is the restart
    assert not result.success and result.error_type == "KernelDied"
    assert "exited with status 1" in result.error_text
    assert rt.kernel_pid != old
    notice = result.notice or ""
    assert "restarted" in notice and "Lost: gen (" in notice
    for name in ("a", "frame", "box", "helper", "js"):
        assert name in notice.split("Restored from the last checkpoint:")[1].split(".")[0]
    await _assert_state_back(rt)


async def test_segfault_through_ctypes(rt):
    assert (await rt.execute(STATE)).success
    result = await rt.execute("import ctypes\nctypes.string_at(0)")
    assert result.error_type == "KernelDied" and "segmentation fault" in result.error_text
    assert "Segmentation fault" in result.error_text  # the kernel's own fatal-error line
    assert "Lost: gen" in (result.notice or "")
    await _assert_state_back(rt)


async def test_deep_recursion_past_the_c_stack(rt):
    """Recursion through C (repr -> __repr__ -> repr ...) with the limit lifted overflows
    the C stack: the kernel dies, and comes back with the state."""
    await rt.execute("a = 1")
    result = await rt.execute(
        "import sys\nsys.setrecursionlimit(10**6)\nclass R:\n    def __repr__(self):\n"
        "        return repr(self)\nrepr(R())",
        timeout=30,
    )
    assert result.error_type == "KernelDied" and "segmentation fault" in result.error_text
    assert (await rt.execute("a + 1")).output == "2\n"


async def test_very_deep_python_recursion_fails_fast(rt):
    """Pure-Python recursion (no C stack in 3.11) with the limit lifted: a
    RecursionError or MemoryError whose traceback is cut, not a minutes-long format."""
    started = time.monotonic()
    result = await rt.execute(
        "import sys\nsys.setrecursionlimit(300_000)\ndef f(n):\n    return f(n + 1)\nf(0)",
        timeout=30,
    )
    assert result.error_type in ("RecursionError", "MemoryError"), result.error_text
    assert "frames omitted" in result.error_text and len(result.error_text) < 5000
    assert time.monotonic() - started < 20
    assert (await rt.execute("1 + 1")).output == "2\n"


async def test_memory_blowup_under_the_limit(rt):
    pid = rt.kernel_pid
    result = await rt.execute("x = []\nwhile True:\n    x.append(bytearray(10**7))")
    assert not result.success and result.error_type == "MemoryError", result.error_text
    if rt.kernel_pid == pid:  # RLIMIT_DATA: a MemoryError, the kernel lives on
        assert "memory limit" in (result.notice or "")
        freed = await rt.execute("n = len(x)\ndel x\nprint(n > 5)")
        assert freed.output == "True\n", freed.error_text
    assert (await rt.execute("y = [0] * 1000\nlen(y)")).output == "1000\n"


async def test_fork_bomb_is_bounded_and_cleaned_up(rt):
    info = await rt.execute(
        "import os, resource\nuid = os.getuid()\n"
        "nproc = resource.getrlimit(resource.RLIMIT_NPROC)[0]"
    )
    assert info.success
    cgroups = rt._kind.process.plan.cgroups
    bounded = "pids" in cgroups or (
        await rt.retrieve("uid") != 0 and await rt.retrieve("nproc") != resource.RLIM_INFINITY
    )
    assert bounded, "refusing to run a fork bomb without a process limit"
    old = rt.kernel_pid
    result = await rt.execute(
        "import os\nwhile True:\n    try:\n        os.fork()\n"
        "    except BaseException:\n        pass",
        timeout=2,
    )
    assert result.timed_out and result.error_type == "Timeout"
    assert "killed and restarted" in result.error_text
    assert rt.kernel_pid != old
    if "pids" in cgroups:
        events = Path(cgroups["pids"], "pids.events")
        assert not events.exists()  # the launcher removed the old kernel's cgroup
    # Nothing of the bomb survives: the new kernel's group is just the new kernel.
    leftovers = [p for p in _group_members(old)]
    assert leftovers == []
    assert (await rt.execute("print('alive')")).output == "alive\n"


def _group_members(pgid: int) -> list[int]:
    members = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.getpgid(int(name)) == pgid:
                    members.append(int(name))
            except OSError:
                pass
    return members


async def test_gil_holding_c_call_is_killed_after_the_grace(rt):
    await rt.execute("kept = 'yes'")
    old = rt.kernel_pid
    result = await rt.execute(
        "import hashlib\nhashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)", timeout=1
    )
    assert result.timed_out and result.interrupted and result.error_type == "Timeout"
    assert "interrupt did not stop it" in result.error_text
    assert rt.kernel_pid != old and "restarted" in (result.notice or "")
    assert await rt.retrieve("kept") == "yes"


async def test_interrupt_that_fails_escalates_to_kill(rt):
    await rt.execute("kept = 2")
    task = asyncio.create_task(
        rt.execute("import hashlib\nhashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)")
    )
    await asyncio.sleep(0.5)
    await rt.interrupt()
    result = await asyncio.wait_for(task, 30)
    assert result.interrupted and result.error_type == "Interrupted"
    assert await rt.retrieve("kept") == 2


async def test_death_while_idle_is_noticed_and_repaired(rt):
    await rt.execute("survivor = 41")
    assert "survivor" in await rt.names()  # also waits for the cell's checkpoint
    old = rt.kernel_pid
    os.kill(old, signal.SIGKILL)
    deadline = time.monotonic() + 15
    while rt.kernel_pid == old and time.monotonic() < deadline:
        await asyncio.sleep(0.05)
    assert rt.kernel_pid != old  # replaced without anyone calling the runtime
    result = await rt.execute("survivor + 1")
    assert result.output == "42\n", result
    assert "was killed (SIGKILL) while idle" in (result.notice or "")


async def test_explicit_restart_keeps_state_and_injections(rt):
    rt.inject(Variable("injected", [1, 2]))
    await rt.execute("made = {'k': 'v'}\ninjected.append(3)")
    report = await rt.restart()
    assert "Restored from the last checkpoint" in report and "No variables were lost" in report
    assert await rt.retrieve("made") == {"k": "v"}
    assert await rt.retrieve("injected") == [1, 2, 3]  # the kernel's version, not the host's
    notice = (await rt.execute("1")).notice or ""
    assert "restarted on request" in notice
    await rt.delete("injected")


async def test_checkpoint_budget_and_unserialisable_values_are_reported(rt):
    await rt.execute(
        "big = bytearray(100 * 2**20)\nsmall = 'kept'\nimport sqlite3\n"
        "conn = sqlite3.connect(':memory:')"
    )
    report = await rt.restart()
    assert "big (about 10" in report and "over the checkpoint budget" in report
    assert "conn (not serialisable" in report
    assert await rt.retrieve("small") == "kept"
    with pytest.raises(KeyError):
        await rt.retrieve("big")


async def test_a_repr_stuck_in_native_code_costs_a_restart_not_a_hang(rt):
    await rt.execute(
        "import hashlib\nclass Stuck:\n    def __repr__(self):\n"
        "        hashlib.pbkdf2_hmac('sha256', b'x', b'y', 10**9)\n        return 'never'\n"
        "stuck = Stuck()\nkept = 5"
    )
    started = time.monotonic()
    await rt.namespace_summary()  # hangs in C: interrupt fails, kill, restart, last rows
    rows = {r.name: r for r in await rt.namespace_summary()}  # now: user types by name
    assert time.monotonic() - started < 30
    assert rows["stuck"].type_name == "Stuck" and rows["stuck"].preview == "…"
    assert rows["kept"].preview == "5"
    assert await rt.retrieve("kept") == 5
    await rt.delete("stuck")
