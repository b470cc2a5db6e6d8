"""Issue 14.5, defect 3: the user's own `!` cells (`AppServices.run_python`, as the app and
`cave --plain` run them) are recorded in their place among the turns, replayed there (so
a later agent cell that uses their variables does not fail), and exported as the user's."""

from __future__ import annotations

import concurrent.futures

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.dataio import Injection
from cave_tui.models import ScriptedModel
from cave_tui.session import (
    SessionRecorder,
    SessionStore,
    export_session,
    read_session,
    replay_session,
)
from cave_tui.session.notebook_format import nbformat
from cave_tui.session.reader import UserCell, recorded_turns
from tests.session.helpers import code, scripted_agent

TURN_CODE = "total = base + 2\nprint('total', total)"
REPLIES = [code(TURN_CODE), "total is 42."]
BEFORE = "base = 40\nprint('base', base)"
AFTER = "print(total * 10)"
FAILING = "total / 0"


async def _run(services: AppServices, src: str) -> None:
    async for _ in services.run_python(src):
        pass


async def _record(tmp_path):
    """A front-end session: a `!` cell, a turn that uses its variable, two more cells."""
    services = AppServices(Config(kernel=False), model=ScriptedModel(REPLIES))
    install(services, DataOptions(sessions_dir=tmp_path / "sessions"))
    await services.start()
    await _run(services, BEFORE)
    async for _ in services.stream("add two to base"):
        pass
    await _run(services, AFTER)
    await _run(services, FAILING)
    await services.shutdown()
    return SessionStore(tmp_path / "sessions").resolve("last")


async def test_user_cells_are_recorded_in_their_place(tmp_path):
    folder = await _record(tmp_path)
    (turn,), trailing = recorded_turns(read_session(folder))
    (before,) = turn.setup
    assert isinstance(before, UserCell) and before.code == BEFORE
    codes = [r for r in read_session(folder).records if r["type"] == "code"]
    assert [r["source"] for r in codes] == ["user", "model", "user", "user"]
    assert before.outcome["output"] == "base 40\n"
    assert turn.steps[1].outcome["output"] == "total 42\n"  # the agent used `base`
    assert [(c.cell, c.code) for c in trailing] == [(2, AFTER), (3, FAILING)]
    assert trailing[0].outcome["output"] == "420\n"
    assert trailing[1].outcome["error_type"] == "ZeroDivisionError"


async def test_replay_runs_user_cells_in_their_place(tmp_path):
    folder = await _record(tmp_path)
    result = await replay_session(folder, pause=0)
    assert result.ok, result.report()
    assert (result.cells, result.steps, result.compared) == (3, 1, 4)
    assert await result.runtime.retrieve("total") == 42
    # A user cell whose output differs is reported as the user's cell.
    events = folder / "events.jsonl"
    events.write_text(events.read_text().replace('"output":"420\\n"', '"output":"421\\n"'))
    result = await replay_session(folder, pause=0)
    assert [d.where for d in result.divergences] == ["user cell 2"]


async def test_exports_show_user_cells_as_the_users(tmp_path):
    folder = await _record(tmp_path)
    notebook = nbformat().read(export_session(folder, tmp_path / "s.ipynb"), as_version=4)
    code_cells = [c for c in notebook.cells if c.cell_type == "code"]
    assert [c.source for c in code_cells] == [BEFORE, TURN_CODE, AFTER, FAILING]
    assert [c.metadata.get("cave", {}).get("by") for c in code_cells] == [
        "user",
        None,
        "user",
        "user",
    ]
    assert [c.execution_count for c in code_cells] == [1, 2, 3, 4]
    assert code_cells[0].outputs[0].text == "base 40\n"
    assert code_cells[3].outputs[-1].ename == "ZeroDivisionError"
    script = export_session(folder, tmp_path / "s.py").read_text()
    assert script.index(BEFORE) < script.index("# User: add two to base") < script.index(AFTER)
    assert "# User ran their own code (a `!` cell):\n\n# %%\nbase = 40" in script


async def test_a_cell_after_an_injection_whose_hash_is_late_stays_after_it(tmp_path):
    agent = scripted_agent(["fine"])
    recorder = SessionRecorder.create(tmp_path, agent=agent)
    slow: concurrent.futures.Future[str] = concurrent.futures.Future()
    source = {"kind": "file", "path": "/data/big.npy", "format": "npy", "sha256": None}
    recorder.record_injection(Injection("big", source, "ndarray", "", sha256_future=slow))
    services = AppServices(Config(kernel=False), model=agent.model, runtime=agent.runtime)
    services.event_hooks.append(recorder.record_user_cell)
    await _run(services, "print('uses big')")  # logged before the injection's record
    slow.set_result("a" * 64)
    await recorder.close()
    _, trailing = recorded_turns(read_session(recorder.dir))
    assert [type(item).__name__ for item in trailing] == ["dict", "UserCell"]


async def test_a_session_of_user_cells_only_replays(tmp_path):
    services = AppServices(Config(kernel=False), model=None)
    install(services, DataOptions(sessions_dir=tmp_path / "sessions"))
    await services.start()
    await _run(services, BEFORE)
    await services.shutdown()
    result = await replay_session(SessionStore(tmp_path / "sessions").resolve("last"), pause=0)
    assert result.ok and (result.turns, result.cells) == (0, 1), result.report()
