import asyncio
import sys
import time

import pandas as pd
import pytest

from cave_tui.runtime import Function, Type, Variable
from cave_tui.runtime.ipython import IPythonRuntime


@pytest.fixture
async def rt():
    runtime = IPythonRuntime()
    yield runtime
    await runtime.stop()


async def test_state_persists_and_retrieve_returns_live_object(rt):
    frame = pd.DataFrame({"a": [1, 2]})
    rt.inject(Variable("df", frame, "input"))
    result = await rt.execute("df['b'] = df['a'] * 10\ntotal = int(df['b'].sum())")
    assert result.success, result.error_text
    assert await rt.retrieve("total") == 30
    assert (await rt.retrieve("df")) is frame  # in-process: the same object
    assert "df" in result.changed and "total" in result.changed


async def test_a_pandas_method_changes_its_frame_only_in_place(rt):
    rt.inject(Variable("df", pd.DataFrame({"a": [1.0, None]})))
    result = await rt.execute("clean = df.dropna(subset=['a']).reset_index()")
    assert result.changed == ["clean"]  # `df` is untouched: the model must not be told otherwise
    result = await rt.execute("df.dropna(inplace=True)\nrows = []\nrows.append(1)")
    assert sorted(result.changed) == ["df", "rows"]


async def test_two_runtimes_never_share_state():
    a, b = IPythonRuntime(), IPythonRuntime()
    await a.execute("shared = 1")
    assert "shared" not in await b.names()
    with pytest.raises(KeyError):
        await b.retrieve("shared")
    await a.stop()
    await b.stop()


async def test_output_capture_stdout_stderr_warnings_and_last_value(rt):
    code = (
        "import sys, warnings\nprint('out')\nprint('err', file=sys.stderr)\n"
        "warnings.warn('careful')\n6*7"
    )
    result = await rt.execute(code)
    assert "out" in result.output and "err" in result.output
    assert "careful" in result.output
    assert result.output.rstrip().endswith("42")


async def test_display_output_is_captured(rt):
    result = await rt.execute("from IPython.display import display\ndisplay({'k': 1})")
    assert "{'k': 1}" in result.output


async def test_error_traceback_is_short_and_named(rt):
    result = await rt.execute("def f():\n    return {}['missing']\nf()")
    assert not result.success
    assert result.error_type == "KeyError"
    assert result.error_text.splitlines()[-1] == "KeyError: 'missing'"
    assert "<cell>" in result.error_text and "IPython" not in result.error_text


async def test_syntax_error(rt):
    result = await rt.execute("def f(:\n  pass")
    assert not result.success and result.error_type == "SyntaxError"


async def test_timeout_really_stops_the_cell(rt):
    started = time.monotonic()
    result = await rt.execute("n = 0\nwhile True:\n    n += 1", timeout=0.3)
    assert result.timed_out and not result.success
    assert time.monotonic() - started < 3
    first = await rt.retrieve("n")
    await asyncio.sleep(0.2)
    assert await rt.retrieve("n") == first  # not running beside the next cell
    after = await rt.execute("print('alive')")
    assert after.success and "alive" in after.output


async def test_host_streams_restored_after_cells(rt):
    out, err = sys.stdout, sys.stderr
    await rt.execute("print('x')")
    await rt.execute("1/0")
    await rt.execute("while True: pass", timeout=0.2)
    assert sys.stdout is out and sys.stderr is err


async def test_cancellation_interrupts_the_cell(rt):
    task = asyncio.create_task(rt.execute("import time\nk = 0\nwhile True:\n    k += 1"))
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    value = await rt.retrieve("k")
    await asyncio.sleep(0.2)
    assert await rt.retrieve("k") == value
    assert (await rt.execute("1+1")).success


async def test_interrupt_method(rt):
    task = asyncio.create_task(rt.execute("while True: pass"))
    await asyncio.sleep(0.2)
    await rt.interrupt()
    result = await asyncio.wait_for(task, 5)
    assert result.interrupted and result.error_type in ("CellInterrupt", "KeyboardInterrupt")


async def test_top_level_await(rt):
    result = await rt.execute("import asyncio\nawait asyncio.sleep(0)\nv = 5")
    assert result.success, result.error_text
    assert await rt.retrieve("v") == 5


async def test_huge_print_is_bounded():
    rt = IPythonRuntime(capture_chars=10_000)
    result = await rt.execute("for i in range(200_000):\n    print(i)")
    assert result.success
    assert len(result.output) < 25_000
    assert "199999" in result.output and "dropped" in result.output
    await rt.stop()


async def test_inject_function_type_and_reset(rt):
    class Light:
        def dim(self, level: int) -> None:
            """Set brightness."""
            self.level = level

    def helper(x: int) -> int:
        return x + 1

    rt.inject(Function(helper))
    rt.inject(Type(Light))
    await rt.execute("lamp = Light()\nlamp.dim(3)\ny = helper(1)")
    assert (await rt.retrieve("lamp")).level == 3
    await rt.reset()
    names = await rt.names()
    assert "lamp" not in names and "helper" in names and "Light" in names


async def test_bad_names_rejected(rt):
    with pytest.raises(ValueError):
        Variable("not valid", 1)
    with pytest.raises(ValueError):
        Variable("class", 1)
    with pytest.raises(KeyError, match="did you mean"):
        await rt.execute("total_sales = 1")
        await rt.retrieve("total_sale")


async def test_summary_survives_a_hostile_repr(rt):
    code = (
        "class Slow:\n"
        "    def __repr__(self):\n"
        "        while True:\n"
        "            pass\n"
        "class Broken:\n"
        "    def __len__(self):\n"
        "        raise RuntimeError('no')\n"
        "slow = Slow()\nbroken = Broken()\nfine = [1, 2]"
    )
    assert (await rt.execute(code)).success
    started = time.monotonic()
    rows = {r.name: r for r in await rt.namespace_summary()}
    assert time.monotonic() - started < 3
    assert rows["fine"].preview == "[1, 2]"
    assert "slow" in rows and "SummaryTimeout" in rows["slow"].preview
    assert "broken" in rows


async def test_cell_timeout_stops_an_endless_loop_and_keeps_the_namespace():
    runtime = IPythonRuntime(cell_timeout=0.5)
    await runtime.start()
    try:
        await runtime.execute("kept = 41")
        result = await runtime.execute("while True: pass")
        assert result.timed_out and not result.success
        assert "timed out after 0.5s" in result.error_text
        after = await runtime.execute("print(kept + 1)")
        assert after.success and after.output == "42\n"
        assert IPythonRuntime().cell_timeout is None  # the library keeps upstream's: no limit
    finally:
        await runtime.stop()
