"""Issue 14.5, defect 1: what a cell prints does not follow the terminal's width, so a
session recorded in a wide terminal replays without divergence with stdout redirected
(and the kernel runtime prints what the in-process one prints)."""

from __future__ import annotations

import os
import subprocess
import sys

from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.runtime.shipped.display_options import PANDAS_OPTIONS
from cave_tui.session import SessionRecorder, read_session, replay_session
from cave_tui.session.reader import recorded_turns
from tests.session.helpers import code, scripted_agent

# 30 columns: wider than any terminal, so a terminal-sized repr would cut it differently.
WIDE = (
    "import pandas as pd\n"
    "wide = pd.DataFrame({f'measure_{i}': [i * 1000 + r for r in range(80)] for i in range(30)})\n"
    "wide"
)


async def _output(runtime, src: str) -> str:
    result = await runtime.execute(src)
    assert result.success, result.error_text
    return result.output


async def test_pandas_output_is_the_same_in_any_terminal(monkeypatch):
    outputs = []
    for columns, lines in (("200", "80"), ("60", "20")):
        monkeypatch.setenv("COLUMNS", columns)  # what shutil.get_terminal_size() reports
        monkeypatch.setenv("LINES", lines)
        outputs.append(await _output(IPythonRuntime(), WIDE))
    assert outputs[0] == outputs[1]
    assert "[80 rows x 30 columns]" in outputs[0]


async def test_a_session_recorded_in_a_wide_terminal_replays_in_a_narrow_one(tmp_path, monkeypatch):
    monkeypatch.setenv("COLUMNS", "160")
    agent = scripted_agent([code(WIDE), "It has 30 columns."])
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    assert await recorder.run("show me a wide table") == "completed"
    await recorder.close()
    monkeypatch.setenv("COLUMNS", "80")
    result = await replay_session(recorder.dir, pause=0)
    assert result.ok, result.report()
    assert result.compared == 1
    (turn,), _ = recorded_turns(read_session(recorder.dir))
    assert "measure_0" in turn.steps[1].outcome["output"]


async def test_a_session_recorded_at_one_width_replays_at_another(tmp_path):
    """Each cell's width is recorded with it (the log's width in the app), and a replay
    prints the cell at that width whatever its own runtime's width is."""
    src = WIDE + "\nprint(wide)"
    agent = scripted_agent([code(src), "Printed."])
    agent.runtime.set_display_width(150)
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    assert await recorder.run("print the wide table") == "completed"
    await recorder.close()
    (turn,), _ = recorded_turns(read_session(recorder.dir))
    outcome = turn.steps[1].outcome
    assert outcome["display_width"] == 150
    assert max(len(line) for line in outcome["output"].splitlines()) > 80
    narrow = IPythonRuntime()
    narrow.set_display_width(60)
    result = await replay_session(recorder.dir, runtime=narrow, pause=0)
    assert result.ok, result.report()
    assert result.compared == 1
    assert narrow.display_width == 60  # live cells after a replay print at their width again


async def test_the_kernel_prints_what_the_in_process_runtime_prints(monkeypatch):
    monkeypatch.setenv("COLUMNS", "150")  # the kernel inherits it
    src = WIDE + "\nprint(wide)\nwide.iloc[:, 0]"
    in_process_runtime = IPythonRuntime()
    in_process_runtime.set_display_width(120)  # the front end's log width
    in_process = await _output(in_process_runtime, src)
    assert 80 < max(len(line) for line in in_process.splitlines()) <= 120
    kernel = IPyKernelRuntime(cell_timeout=60)
    kernel.set_display_width(120)
    await kernel.start()
    try:
        assert await _output(kernel, src) == in_process
    finally:
        await kernel.stop()


def test_pandas_first_imported_by_a_cell_is_pinned_too():
    """In a fresh process pandas is not imported yet: the options are set as it loads."""
    script = (
        "import asyncio, sys\n"
        "from cave_tui.runtime.ipython import IPythonRuntime\n"
        "runtime = IPythonRuntime()\n"
        "assert 'pandas' not in sys.modules\n"
        "src = 'import pandas as pd\\nprint(pd.get_option(\"display.max_columns\"))'\n"
        "print(asyncio.run(runtime.execute(src)).output, end='')\n"
    )
    env = {**os.environ, "COLUMNS": "200"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=60
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout == f"{PANDAS_OPTIONS['display.max_columns']}\n"
