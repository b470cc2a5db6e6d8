"""The in-process memory watchdog, with a real IPythonRuntime: what it stops, what it cannot."""

from __future__ import annotations

import os
import time

import pytest

from cave_tui.runtime.failures import RuntimeFailure
from cave_tui.runtime.ipython import IPythonRuntime, MemoryLimitExceeded, MemoryLimitWarning
from cave_tui.runtime.items import Variable
from cave_tui.runtime.memory import (
    MemoryUse,
    auto_memory_limit,
    machine_memory,
    process_rss,
    resolve_memory_limit,
)

MiB = 1 << 20
GROW_IN_PYTHON = "hog = []\nfor i in range(3000):\n    hog.append(b'x' * (1 << 20))\n"


async def _runtime(over_now: int, **watchdog: float) -> IPythonRuntime:
    """A runtime whose limit is *over_now* bytes above this process's memory now."""
    runtime = IPythonRuntime(memory_limit=process_rss() + over_now)
    assert runtime.memory_watchdog is not None
    for name, value in {"interval": 0.01, **watchdog}.items():
        setattr(runtime.memory_watchdog, name, value)
    return runtime


async def test_a_python_loop_past_the_limit_is_stopped_and_its_memory_freed():
    runtime = await _runtime(150 * MiB)
    try:
        assert (await runtime.execute("keep = [1, 2, 3]")).success
        result = await runtime.execute(GROW_IN_PYTHON)
        assert result.error_type == RuntimeFailure.MEMORY_LIMIT
        assert isinstance(result.error, MemoryLimitExceeded)
        assert result.interrupted and not result.success
        assert "hog" not in runtime.shell.user_ns  # what the cell built is gone...
        assert await runtime.retrieve("keep") == [1, 2, 3]  # ...earlier variables are not
        use = runtime.memory_use()
        assert use.limit == runtime.memory_limit and use.used < use.limit  # memory came back
        after = await runtime.execute("total = sum(keep)")
        assert after.success and await runtime.retrieve("total") == 6
    finally:
        await runtime.stop()


async def test_a_cell_under_the_limit_is_untouched():
    runtime = await _runtime(400 * MiB)
    try:
        result = await runtime.execute("import time\nsmall = b'x' * (20 << 20)\ntime.sleep(0.1)")
        assert result.success, result.error_text
        assert runtime.memory_watchdog is not None and runtime.memory_watchdog.samples > 0
        assert len(await runtime.retrieve("small")) == 20 << 20
    finally:
        await runtime.stop()


async def test_a_single_c_call_past_the_limit_gets_the_plain_warning():
    # np.ones fills 400 MB in one C call: no bytecode runs, so the stop waits for its end.
    runtime = await _runtime(32 * MiB, grace=0.01, interval=0.005)
    streamed: list[str] = []
    try:
        await runtime.execute("import numpy as np")
        result = await runtime.execute("a = np.ones(50_000_000)", on_output=streamed.append)
        assert f"{MemoryLimitWarning.__name__}: " in "".join(streamed)
        assert f"{MemoryLimitWarning.__name__}: " in result.output  # the model reads it too
        assert result.error_type == RuntimeFailure.MEMORY_LIMIT  # stopped once it returned
        assert "a" not in runtime.shell.user_ns
    finally:
        await runtime.stop()


async def test_a_cell_that_starts_over_the_limit_may_still_free_memory():
    runtime = await _runtime(100 * MiB)
    try:
        runtime.inject(Variable("big", b"x" * (300 * MiB)))  # the host put it there
        assert runtime.memory_use().used > (runtime.memory_limit or 0)
        result = await runtime.execute("del big\nsmall = 1")
        assert result.success, result.error_text
    finally:
        await runtime.stop()


async def test_the_watchdog_sleeps_while_no_cell_runs():
    runtime = await _runtime(400 * MiB)
    watchdog = runtime.memory_watchdog
    assert watchdog is not None
    try:
        assert (await runtime.execute("import time\ntime.sleep(0.05)")).success
        taken = watchdog.samples
        time.sleep(0.2)  # twenty intervals with no cell
        assert watchdog.samples == taken
    finally:
        await runtime.stop()


async def test_memory_limit_none_turns_the_watchdog_off():
    runtime = IPythonRuntime(memory_limit=None)
    try:
        assert runtime.memory_watchdog is None and runtime.memory_limit is None
        assert runtime.memory_use().limit is None
        result = await runtime.execute("grown = [b'x' * (1 << 20) for _ in range(50)]")
        assert result.success
    finally:
        await runtime.stop()


def test_the_limit_setting():
    assert resolve_memory_limit("4G") == 4 << 30
    assert resolve_memory_limit("512M") == 512 * MiB
    assert resolve_memory_limit(123_456_789) == 123_456_789
    assert resolve_memory_limit(None) is None
    auto = resolve_memory_limit("auto")
    assert auto is not None and 0 < auto <= 0.8 * machine_memory()
    assert auto == pytest.approx(auto_memory_limit(), rel=0.05)
    for wrong in ("lots", "0", -1, True):
        with pytest.raises(ValueError):
            resolve_memory_limit(wrong)
    assert IPythonRuntime().memory_limit is not None  # the library default is "auto"
    assert MemoryUse(used=50, limit=200).fraction == 0.25
    assert process_rss(os.getpid()) == pytest.approx(process_rss(), rel=0.2)


async def test_the_sampling_thread_starts_before_the_cell_can_be_interrupted(monkeypatch):
    """Issue 31.10: an interrupt sent while the cell's thread starts another thread goes to
    the new thread (CPython), which dies before it reports started: the cell hung forever."""
    import threading

    from cave_tui.runtime import IPythonRuntime

    rt = IPythonRuntime(memory_limit=10**12)
    assert (await rt.execute("x = 1")).success
    assert rt.memory_watchdog is not None
    rt.memory_watchdog.close()  # the next cell needs a new sampling thread
    started_in_cell: list[bool] = []
    start = threading.Thread.start

    def watched_start(thread: threading.Thread) -> None:
        if thread.name == "cave-memory-watchdog":
            started_in_cell.append(rt._in_cell)
        start(thread)

    monkeypatch.setattr(threading.Thread, "start", watched_start)
    assert (await rt.execute("y = 2")).success
    assert started_in_cell == [False]
    await rt.stop()
