"""A turn ended by `final_answer(...)`: recorded as the code that ran, replayed and checked
(its answer included), and exported with the answer."""

from __future__ import annotations

from cave_tui.session import SessionRecorder, export_session, read_session, replay_session
from cave_tui.session.notebook_format import nbformat
from cave_tui.session.reader import recorded_turns
from tests.session.helpers import code, scripted_agent

ANSWERED = [
    code("n = 6 * 7\nprint('computed')"),
    code("final_answer(f'The answer is {n}.')"),
]


async def _record(tmp_path):
    agent = scripted_agent(ANSWERED)
    recorder = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    response = await recorder.run("what is six times seven?")
    await recorder.close()
    assert response == "completed"
    return recorder.dir


async def test_the_final_answer_step_keeps_its_code_and_answer(tmp_path):
    folder = await _record(tmp_path)
    turns, _ = recorded_turns(read_session(folder))
    step = turns[0].steps[2]
    assert "final_answer(" in (step.reply or "") and step.code is not None
    assert step.outcome is not None and step.outcome["type"] == "execution_output"
    assert turns[0].answer is not None and turns[0].answer["content"] == "The answer is 42."


async def test_replay_check_compares_the_final_answer(tmp_path):
    folder = await _record(tmp_path)
    result = await replay_session(folder, pause=0)
    assert result.ok, result.report()
    assert result.compared == 3  # two cells and the answer
    # A recording whose answer differs from what the code computes is reported.
    events = folder / "events.jsonl"
    events.write_text(events.read_text().replace("The answer is 42.", "The answer is 41."))
    result = await replay_session(folder, pause=0)
    assert [d.what for d in result.divergences] == ["final answer"]
    assert "The answer is 41." in result.report() and "The answer is 42." in result.report()


async def test_exports_show_the_answer(tmp_path):
    folder = await _record(tmp_path)
    notebook = nbformat().read(export_session(folder, tmp_path / "s.ipynb"), as_version=4)
    markdown = [c.source for c in notebook.cells if c.cell_type == "markdown"]
    assert markdown[-1] == "**cave:** The answer is 42."
    script = export_session(folder, tmp_path / "s.py").read_text()
    assert "# cave: The answer is 42." in script
