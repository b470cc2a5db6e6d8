"""Issue 14.5, defect 2: code the user edited or skipped in approval mode is recorded as
what really ran, replayed that way (the edit runs, the skipped step does not), and
exported as what ran."""

from __future__ import annotations

from cave_tui.session import SessionRecorder, export_session, read_session, replay_session
from cave_tui.session.notebook_format import nbformat
from cave_tui.session.reader import StepRun, recorded_turns
from tests.session.helpers import code, scripted_agent

MODEL_CODE = "x = 1\nprint('x is', x)"
EDITED_CODE = "x = 41\nprint('x is', x)"
SKIPPED_CODE = "x = 0\nwiped = True"
REPLIES = [
    code(MODEL_CODE),
    code(SKIPPED_CODE),
    code("print('x + 1 =', x + 1)"),
    "x + 1 is 42.",
]


async def approve(code_: str) -> str | None:
    """The user edits the first block and skips the one that would wipe x."""
    if code_.startswith("x = 1"):
        return EDITED_CODE + "\n"
    if "wiped" in code_:
        return None
    return code_


async def _record(tmp_path):
    agent = scripted_agent(REPLIES, approve=approve)
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    assert await recorder.run("set x and add one") == "completed"
    await recorder.close()
    return recorder.dir


async def test_the_recording_says_what_ran(tmp_path):
    folder = await _record(tmp_path)
    (turn,), _ = recorded_turns(read_session(folder))
    edited, skipped, last = turn.steps[1], turn.steps[2], turn.steps[3]
    assert edited.run is StepRun.EDITED
    assert edited.code.strip() == EDITED_CODE and edited.proposed.strip() == MODEL_CODE
    assert edited.outcome["output"] == "x is 41\n"
    assert skipped.run is StepRun.SKIPPED and skipped.outcome is None
    assert last.run is StepRun.AS_WRITTEN and last.outcome["output"] == "x + 1 = 42\n"


async def test_replay_runs_the_edit_and_skips_the_skipped_step(tmp_path):
    folder = await _record(tmp_path)
    result = await replay_session(folder, pause=0)
    assert result.ok, result.report()
    assert result.compared == 2  # the edited cell and the last one; the skipped one never ran
    assert await result.runtime.retrieve("x") == 41
    assert "wiped" not in await result.runtime.names()
    assert result.agent.approve is None  # going on live, nothing is replayed any more


async def test_exports_show_what_ran(tmp_path):
    folder = await _record(tmp_path)
    notebook = nbformat().read(export_session(folder, tmp_path / "s.ipynb"), as_version=4)
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert [c.source for c in code_cells] == [EDITED_CODE, "print('x + 1 =', x + 1)"]
    assert code_cells[0].metadata["cave"] == {"edited": True, "model_code": MODEL_CODE}
    markdown = "\n".join(c.source for c in notebook.cells if c.cell_type == "markdown")
    assert "edited the model's code" in markdown
    assert f"skipped this code; it did not run:*\n\n```python\n{SKIPPED_CODE}\n```" in markdown
    script = export_session(folder, tmp_path / "s.py").read_text()
    assert f"# %%\n{EDITED_CODE}\n" in script and f"# %%\n{MODEL_CODE}" not in script
    assert "#     x = 0\n#     wiped = True" in script and "\nwiped = True" not in script
