"""Issue 31.4: the user's own `!` cells are the user's: the security policy (which guards the
model's code) never refuses them, in any policy; the model's cells are still checked; a
`/policy NAME` during a session is recorded and replay sets it at the same point."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cave_tui.agent import events as ev
from cave_tui.app.commands import CommandContext, load_commands
from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.models import ScriptedModel
from cave_tui.session import SessionStore, read_session, replay_session
from cave_tui.session.export import to_notebook, to_script
from cave_tui.session.reader import recorded_turns
from tests.helpers.front_end import RecordingFrontEnd
from tests.session.helpers import code

CAVE = str(Path(sys.executable).with_name("cave"))
IMPORT_OS = "import os\nprint(os.path.basename(os.getcwd()))"
WRITE_FILE = "open('x.txt', 'w').write('1')"
SUBPROCESS = "import subprocess\nprint(subprocess.run(['true']).returncode)"  # standard refuses
OUTCOMES = (ev.ExecutionOutputEvent, ev.ExecutionErrorEvent, ev.SecurityErrorEvent)


async def _cell(services: AppServices, src: str) -> ev.Event:
    events = [e async for e in services.run_python(src)]
    return next(e for e in events if isinstance(e, OUTCOMES))


@pytest.mark.parametrize("policy", ["standard", "strict"])
async def test_the_users_own_cells_run_under_any_policy(tmp_path, monkeypatch, policy):
    monkeypatch.chdir(tmp_path)
    services = AppServices(Config(kernel=False, guard=policy))
    await services.start()
    try:
        assert services.runtime.security_checker is not None  # the guard is on
        imported = await _cell(services, IMPORT_OS)
        assert isinstance(imported, ev.ExecutionOutputEvent), imported
        assert imported.output.strip() == tmp_path.name
        wrote = await _cell(services, WRITE_FILE)
        assert isinstance(wrote, ev.ExecutionOutputEvent), wrote
        assert (tmp_path / "x.txt").read_text() == "1"
        ran = await _cell(services, SUBPROCESS)
        assert isinstance(ran, ev.ExecutionOutputEvent), ran
        assert ran.output.strip() == "0"
    finally:
        await services.shutdown()


@pytest.mark.parametrize(
    ("policy", "src"), [("standard", SUBPROCESS), ("strict", IMPORT_OS), ("strict", WRITE_FILE)]
)
async def test_the_models_cells_are_still_checked(tmp_path, monkeypatch, policy, src):
    monkeypatch.chdir(tmp_path)
    services = AppServices(Config(kernel=False, guard=policy), model=ScriptedModel([code(src)]))
    await services.start()
    try:
        events = [e async for e in services.stream("do it")]
        assert any(isinstance(e, ev.SecurityErrorEvent) for e in events)
        assert not any(isinstance(e, ev.ExecutionOutputEvent) for e in events)
        assert not (tmp_path / "x.txt").exists()
    finally:
        await services.shutdown()


async def test_a_policy_change_is_recorded_and_replayed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    replies = [code(IMPORT_OS), "refused.", code(IMPORT_OS), "done."]
    services = AppServices(Config(kernel=False, guard="strict"), model=ScriptedModel(replies))
    install(services, DataOptions(sessions_dir=tmp_path / "sessions"))
    ctx = CommandContext(services, RecordingFrontEnd())
    await services.start()
    assert isinstance(await _cell(services, IMPORT_OS), ev.ExecutionOutputEvent)
    first = [e async for e in services.stream("where are we?")]
    assert any(isinstance(e, ev.SecurityErrorEvent) for e in first)
    assert await load_commands().dispatch("/policy trusted", ctx)
    second = [e async for e in services.stream("where are we, trusted?")]
    assert any(isinstance(e, ev.ExecutionOutputEvent) for e in second)
    await services.shutdown()

    folder = SessionStore(tmp_path / "sessions").resolve("last")
    data = read_session(folder)
    assert data.meta["policy"] == "strict"  # what it started with
    (policy,) = data.of_type("policy")
    assert policy["policy"] == "trusted" and policy["before_turn"] == 2
    turns, _ = recorded_turns(data)
    assert [type(item).__name__ for item in turns[1].setup] == ["PolicyChange"]
    note = "The user set the security policy to `trusted`."
    assert note in to_script(folder)  # exports say it where it happened
    assert any(note in cell.source for cell in to_notebook(folder).cells)
    result = await replay_session(folder, pause=0)
    try:
        assert result.ok, result.report()
        assert (result.cells, result.steps) == (1, 2)  # the user's cell ran again, unrefused
        assert result.runtime.security_checker is None  # trusted, as at the end
    finally:
        await result.runtime.stop()
    args = [CAVE, "replay", folder.name, "--headless", "--check", "--sessions-dir", "sessions"]
    done = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "matches the recording" in done.stdout


async def test_resuming_under_another_policy_is_a_recorded_change(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    sessions = tmp_path / "sessions"
    services = AppServices(
        Config(kernel=False, guard="strict"), model=ScriptedModel([code(IMPORT_OS), "no."])
    )
    install(services, DataOptions(sessions_dir=sessions))
    await services.start()
    [e async for e in services.stream("where are we?")]
    await services.shutdown()
    folder = SessionStore(sessions).resolve("last")

    resumed = AppServices(
        Config(kernel=False, guard="trusted"), model=ScriptedModel([code(IMPORT_OS), "here."])
    )
    install(resumed, DataOptions(sessions_dir=sessions, resume=folder.name))
    await resumed.start()
    again = [e async for e in resumed.stream("and now?")]
    assert any(isinstance(e, ev.ExecutionOutputEvent) for e in again)
    await resumed.shutdown()

    (policy,) = read_session(folder).of_type("policy")
    assert policy["policy"] == "trusted" and policy["before_turn"] == 2
    result = await replay_session(folder, pause=0)
    try:
        assert result.ok, result.report()
    finally:
        await result.runtime.stop()


async def test_a_policy_changed_during_a_turn_applies_from_the_next_step(tmp_path, monkeypatch):
    """`/policy` runs at once, a turn running or not (the app does not queue commands)."""
    monkeypatch.chdir(tmp_path)
    replies = [code("x = 1\nprint(x)"), code(IMPORT_OS), "done."]
    services = AppServices(Config(kernel=False, guard="strict"), model=ScriptedModel(replies))
    install(services, DataOptions(sessions_dir=tmp_path / "sessions"))
    ctx = CommandContext(services, RecordingFrontEnd())
    await services.start()
    events = []
    async for event in services.stream("go"):
        events.append(event)
        if isinstance(event, ev.ExecutionOutputEvent) and event.step == 1:  # between steps
            assert await load_commands().dispatch("/policy trusted", ctx)
    outputs = [e for e in events if isinstance(e, ev.ExecutionOutputEvent)]
    assert [e.step for e in outputs] == [1, 2]  # step 2 ran under trusted
    await services.shutdown()

    folder = SessionStore(tmp_path / "sessions").resolve("last")
    (turn,), trailing = recorded_turns(read_session(folder))
    assert turn.policies == {2: "trusted"} and trailing == []
    result = await replay_session(folder, pause=0)
    try:
        assert result.ok, result.report()
        assert result.runtime.security_checker is None
    finally:
        await result.runtime.stop()


async def test_going_on_after_a_replay_keeps_the_policy_it_set(tmp_path, monkeypatch):
    """The app replays into its own runtime (`/replay`, `cave replay` without --headless):
    the policy the session ended with is the app's afterwards, said and recorded."""
    monkeypatch.chdir(tmp_path)
    services = AppServices(Config(kernel=False, guard="strict"), model=ScriptedModel([]))
    install(services, DataOptions(sessions_dir=tmp_path / "sessions"))
    ctx = CommandContext(services, RecordingFrontEnd())
    await services.start()
    assert await load_commands().dispatch("/policy trusted", ctx)
    assert isinstance(await _cell(services, "y = 2"), ev.ExecutionOutputEvent)
    await services.shutdown()
    recorded = SessionStore(tmp_path / "sessions").resolve("last")

    app = AppServices(Config(kernel=False, guard="strict"), model=ScriptedModel([]))
    install(app, DataOptions(sessions_dir=tmp_path / "sessions"))
    await app.start()
    result = await replay_session(recorded, runtime=app.runtime, pause=0)
    app.continue_from(result.agent)
    assert app.config.policy == "trusted" and app.runtime.security_checker is None
    assert app.session is not None
    (policy,) = read_session(app.session.dir).of_type("policy")
    assert policy["policy"] == "trusted"
    await app.shutdown()
