"""Resume restores history and namespace; replay re-runs and diffs; export writes ipynb/py."""

from __future__ import annotations

import ast
import json
import shutil

import pandas as pd
import pytest

from cave_tui.dataio import inject_file
from cave_tui.session import (
    ReplayError,
    SessionRecorder,
    export_session,
    read_session,
    replay_session,
    resume_session,
)
from cave_tui.session.notebook_format import nbformat
from cave_tui.session.resume import RESUME_NOTE
from tests.session.helpers import TWO_TURNS, code, scripted_agent


async def _recorded(tmp_path, frame=None):
    agent = scripted_agent(TWO_TURNS)
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    if frame is not None:
        frame.to_parquet(tmp_path / "sales.parquet")
        recorder.record_injection(await inject_file(agent.runtime, tmp_path / "sales.parquet"))
    await recorder.run("make x and y")
    await recorder.run("double it")
    await recorder.close()
    return agent, recorder


async def test_resume_restores_history_and_namespace_then_keeps_recording(tmp_path):
    agent, recorder = await _recorded(tmp_path)
    fresh = scripted_agent([code("print(x, y.a.tolist(), z.tolist(), pd.__name__)"), "ok"])
    result = await resume_session(recorder.dir, fresh)
    assert fresh.history == agent.history
    assert set(result.restored) >= {"x", "y", "z", "pd"}
    assert result.interrupted_turn is None
    async for event in result.recorder.stream_events("check"):
        if event.type.value == "execution_output":
            assert event.output == "41 [41, 42] [82, 84] pandas\n"
    await result.recorder.close()
    data = read_session(recorder.dir)
    assert sum(r["type"] == "user" for r in data.records) == 3
    assert data.meta["turns"] == 3 and data.meta["status"] == "closed"


async def test_resume_after_a_crash_mid_turn_keeps_completed_steps(tmp_path):
    agent = scripted_agent([code("a = 1"), code("b = a + 1"), code("c = b + 1"), "done"])
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    events = recorder.stream_events("count")
    async for event in events:
        if event.type.value == "step" and event.step == 3:
            break  # the process "dies" here, during step 3: no turn end, no close
    await recorder.settle()  # the snapshots of steps 1 and 2 (in the background) had time
    recorder._closed = True  # dead processes write nothing more…
    recorder.log._f.close()  # …and the OS closes (and unlocks) the log
    fresh = scripted_agent([])
    result = await resume_session(recorder.dir, fresh)
    assert result.interrupted_turn == 1
    assert sorted(result.restored) == ["a", "b"]
    assert fresh.history[-1]["content"] == RESUME_NOTE
    contents = [m["content"] for m in fresh.history]
    assert contents[0] == "count" and "```python\nb = a + 1\n```" in contents
    assert "c = b + 1" not in "".join(contents)
    await result.recorder.close()


async def test_resume_reinjects_data_missing_from_the_snapshot(tmp_path, frame):
    _, recorder = await _recorded(tmp_path, frame)
    shutil.rmtree(recorder.namespace_dir)
    fresh = scripted_agent([])
    result = await resume_session(recorder.dir, fresh)
    assert result.restored == ["sales"]
    pd.testing.assert_frame_equal(await fresh.runtime.retrieve("sales"), frame)
    await result.recorder.close()


async def test_replay_matches_and_checks_injected_files(tmp_path, frame):
    _, recorder = await _recorded(tmp_path, frame)
    result = await replay_session(recorder.dir)
    assert result.ok, result.report()
    assert result.turns == 2 and result.compared == 3
    pd.testing.assert_frame_equal(await result.runtime.retrieve("sales"), frame)
    assert (await result.runtime.retrieve("z")).tolist() == [82, 84]
    frame.head(1).to_parquet(tmp_path / "sales.parquet")  # the data changed since
    with pytest.raises(ReplayError, match=r"sales\.parquet changed since the recording"):
        await replay_session(recorder.dir)


async def test_replay_reports_a_readable_diff_when_an_output_differs(tmp_path):
    _, recorder = await _recorded(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(recorder.dir, copy)
    lines = (copy / "events.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["type"] == "execution_output" and record["output"] == "83\n":
            record["output"] = "84\n"
            lines[i] = json.dumps(record)
    (copy / "events.jsonl").write_text("\n".join(lines) + "\n")
    result = await replay_session(copy)
    assert not result.ok and len(result.divergences) == 1
    report = result.report()
    assert "DIVERGED" in report and "turn 1, step 2" in report
    assert "-84" in report and "+83" in report


def test_export_notebook_and_script(tmp_path):
    import asyncio

    _, recorder = asyncio.run(_recorded(tmp_path, pd.DataFrame({"v": [1, 2]})))
    nb_path = export_session(recorder.dir, tmp_path / "out.ipynb")
    nb = nbformat().read(nb_path, as_version=4)
    nbformat().validate(nb)
    kinds = [c.cell_type for c in nb.cells]
    assert kinds.count("code") == 4  # the injection's loader and three cells
    sources = [c.source for c in nb.cells]
    assert any("pd.read_parquet" in s and "sales.parquet" in s for s in sources)
    assert "**User:** make x and y" in sources
    first_cell = next(c for c in nb.cells if c.cell_type == "code" and "x = 41" in c.source)
    assert first_cell.outputs[0]["text"] == "41\n" and first_cell.execution_count == 1
    assert any("**cave:** Done" in s for s in sources)

    script = export_session(recorder.dir, tmp_path / "out.py").read_text()
    ast.parse(script)
    assert "# %%\nx = 41\nprint(x)\n# Output:\n# 41" in script
    assert "# User: double it" in script
    with pytest.raises(Exception, match=r"\.ipynb or \.py"):
        export_session(recorder.dir, tmp_path / "out.txt")


async def test_export_shows_errors_as_error_outputs(tmp_path):
    agent = scripted_agent([code("1 / 0"), "It failed."])
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    await recorder.run("divide")
    await recorder.close()
    nb = nbformat().read(export_session(recorder.dir, tmp_path / "e.ipynb"), as_version=4)
    cell = next(c for c in nb.cells if c.cell_type == "code")
    error = cell.outputs[-1]
    assert error["output_type"] == "error" and error["ename"] == "ZeroDivisionError"


async def test_replay_runs_under_the_recorded_security_policy(tmp_path):
    checker_module = pytest.importorskip("cave_tui.security.checker")  # lands with issue 3
    from cave_tui.agent import CaveAgent
    from cave_tui.models import ScriptedModel
    from cave_tui.runtime.ipython import IPythonRuntime

    checker = checker_module.SecurityChecker.for_policy("strict")
    runtime = IPythonRuntime(security_checker=checker)
    agent = CaveAgent(ScriptedModel([code("import os\nprint(os.getcwd())"), "blocked"]), runtime)
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    await recorder.run("where am I")
    await recorder.close()
    assert read_session(recorder.dir).meta["policy"] == "strict"
    result = await replay_session(recorder.dir)
    assert result.ok, result.report()  # blocked again, not run


async def test_after_a_resume_only_what_the_user_gave_counts_as_given(tmp_path, frame):
    """The snapshot says which names the user gave: the model's own variables come back as
    the model's, so rebinding them later is not taken for replacing the user's object."""
    agent, recorder = await _recorded(tmp_path, frame)
    assert agent.runtime.given_names() == {"sales"}
    fresh = scripted_agent([code("x = x + 1"), "x is 42 now"])
    result = await resume_session(recorder.dir, fresh)
    assert {"x", "sales"} <= set(result.restored)
    assert fresh.runtime.given_names() == {"sales"}  # x, y, z are the model's
    interventions = [
        e.policy
        async for e in result.recorder.stream_events("bump x")
        if e.type.value == "intervention"
    ]
    assert "keep_given" not in interventions
    await result.recorder.close()
