"""Issue 7's data and session features wired into the app (pilot) and the CLI start-up."""

from __future__ import annotations

import json
import os
import pickle
import subprocess
import sys
from pathlib import Path

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
from cave_tui.models import ScriptedModel
from tests.helpers.paths import REPO_ROOT

from .conftest import TWO_STEP_FRAME, chat_text, settle, submit, wait_for


def make_data_app(replies: list | None, data: DataOptions):
    from cave_tui.frontends.tui.app import CaveApp

    model = ScriptedModel(replies) if replies is not None else None
    services = AppServices(Config(kernel=False), model=model)
    install(services, data)
    app = CaveApp(
        services,
        animate=False,
        clock=lambda: 0.0,
        history_file=None,
        persist_settings=False,
        start_delay=0,
        answer_grace=0,  # as make_app: dialogs answered as soon as they are open
    )
    return app


def records(folder: Path) -> list[dict]:
    return [json.loads(line) for line in (folder / "events.jsonl").read_text().splitlines()]


def only_session(root: Path) -> Path:
    folders = [p for p in root.iterdir() if (p / "events.jsonl").exists()]
    assert len(folders) == 1, folders
    return folders[0]


async def test_turns_are_recorded_as_they_happen_and_quit_dumps(tmp_path):
    csv = tmp_path / "birds.csv"
    csv.write_text("species,mass\nAdelie,3700\nGentoo,5076\n")
    sessions = tmp_path / "sessions"
    data = DataOptions(inject=[f"{csv}:birds"], dump=tmp_path / "out", sessions_dir=sessions)
    app = make_data_app(TWO_STEP_FRAME, data)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        recorder = app.services.session
        assert app.services.sessions_dir == sessions
        assert "birds" in app.services.runtime._ns
        assert "Recording session" in chat_text(app)
        await submit(pilot, "Which species is heaviest?")
        # Written during the turn: the events, a snapshot after each step, the turn's end.
        kinds = [r["type"] for r in records(recorder.dir)]
        assert kinds.count("code") == 2 and "final_response" in kinds
        assert kinds.count("snapshot") >= 2 and "turn_end" in kinds
        injection = next(r for r in records(recorder.dir) if r["type"] == "injection")
        assert injection["name"] == "birds"
        await submit(pilot, "/quit")
        await pilot.pause()
    folder = only_session(sessions)
    meta = json.loads((folder / "meta.json").read_text())
    assert meta["status"] == "closed" and meta["turns"] == 1
    last = records(folder)[-1]
    assert (last["type"], last["status"]) == ("closed", "closed")
    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    names = {entry["name"] for entry in manifest["variables"]}
    assert {"birds", "df", "heaviest"} <= names


async def test_inject_of_a_pickle_asks_and_loads_on_yes(tmp_path):
    path = tmp_path / "obj.pkl"
    path.write_bytes(pickle.dumps({"answer": 42}))
    app = make_data_app([], DataOptions(sessions_dir=tmp_path / "sessions"))
    async with app.run_test() as pilot:
        await settle(pilot)
        app.prompt.text = f"/inject {path}"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot)
        assert "obj" not in app.services.runtime._ns
        app.prompt.text = f"/inject {path}"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        assert "pickle" in str(app.screen.question).lower()
        await pilot.press("y")
        await settle(pilot)
        await wait_for(pilot, lambda: "obj" in app.services.runtime._ns)
        assert app.services.runtime._ns["obj"] == {"answer": 42}
        recorder = app.services.session
        await submit(pilot, "/quit")
    injected = [r for r in records(recorder.dir) if r["type"] == "injection"]
    assert [r["name"] for r in injected] == ["obj"]


async def test_a_failing_turn_still_closes_the_session_on_exit(tmp_path):
    sessions = tmp_path / "sessions"
    app = make_data_app(["```python\nx = 1\n```", RuntimeError("model went away")], DataOptions(
        sessions_dir=sessions))  # fmt: skip
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        await submit(pilot, "set x")
        await app.action_quit()
    folder = only_session(sessions)
    kinds = [r["type"] for r in records(folder)]
    assert "code" in kinds and "execution_output" in kinds
    assert json.loads((folder / "meta.json").read_text())["status"] == "closed"


def _cave(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {
        **os.environ,
        "CAVE_CONFIG_DIR": str(cwd / "config"),
        "CAVE_DATA_DIR": str(cwd / "data"),
        "PYTHONPATH": str(REPO_ROOT),
    }
    env.pop("CAVE_MODEL", None)
    return subprocess.run(
        [sys.executable, "-m", "cave_tui", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        timeout=60,
        check=False,
        stdin=subprocess.DEVNULL,
    )


def test_a_file_that_cannot_be_loaded_stops_the_start_with_exit_2(tmp_path):
    bad = tmp_path / "broken.parquet"
    bad.write_bytes(b"not parquet at all")
    for argv in (["--inject", str(bad)], ["--plain", "--inject", str(bad)]):
        result = _cave(*argv, "--sessions-dir", str(tmp_path / "s"), cwd=tmp_path)
        assert result.returncode == 2, result
        assert "cannot start" in result.stderr and "broken.parquet" in result.stderr
        assert "\x1b[?1049h" not in result.stdout  # the app's screen never opened


async def test_demo_replays_in_the_app_and_leaves_the_data_live(tmp_path):
    from cave_tui.app.demo import demo_session_path

    app = make_data_app(None, DataOptions(sessions_dir=tmp_path / "sessions"))
    app.startup_replay = (demo_session_path(), 1000.0, False)
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: "matches the recording" in chat_text(app), timeout=60)
        await settle(pilot)
        assert "flights" in [row.name for row in app.inspector.table.rows]
        text = chat_text(app)
        assert "No model is configured" in text and "data is live" in text
        # The conversation goes on from the replay: the agent holds its history.
        assert app.services.agent is not None and len(app.services.agent.history) >= 2
        await submit(pilot, "!n = len(flights)")
        assert app.services.runtime._ns["n"] > 300_000
        await app.action_quit()


async def test_replay_command_runs_in_the_app_then_continues_live(tmp_path):
    from cave_tui.app.demo import demo_session_path

    app = make_data_app(["Still here: **flights** is loaded."], DataOptions(
        sessions_dir=tmp_path / "sessions"))  # fmt: skip
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.services.sessions_dir = demo_session_path().parent
        await submit(pilot, "/replay demo-flights")
        await wait_for(pilot, lambda: "matches the recording" in chat_text(app), timeout=60)
        await settle(pilot)
        replayed = len(app.services.agent.history)
        await submit(pilot, "is flights still there?")
        assert "Still here" in chat_text(app)
        assert len(app.services.agent.history) == replayed + 2
        recorder = app.services.session
        await app.action_quit()
    kinds = [r["type"] for r in records(recorder.dir)]
    assert "final_response" in kinds


async def test_resume_last_restores_history_and_namespace_in_the_app(tmp_path):
    sessions = tmp_path / "sessions"
    app = make_data_app(TWO_STEP_FRAME, DataOptions(sessions_dir=sessions))
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "Which species is heaviest?")
        await app.action_quit()
    app = make_data_app(["Still **Gentoo**."], DataOptions(resume="last", sessions_dir=sessions))
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        assert app.services.runtime._ns["heaviest"] == "Gentoo"
        assert len(app.services.agent.history) >= 4
        assert "resumed session" in chat_text(app)
        await submit(pilot, "and now?")
        assert "Still **Gentoo**." in chat_text(app) or "Still Gentoo" in chat_text(app)
        await app.action_quit()
    folder = only_session(sessions)
    assert json.loads((folder / "meta.json").read_text())["turns"] == 2


async def test_dump_over_an_existing_dump_asks_first(tmp_path):
    app = make_data_app([], DataOptions(sessions_dir=tmp_path / "sessions"))
    async with app.run_test() as pilot:
        await settle(pilot)
        await submit(pilot, "!x = 1")
        await submit(pilot, f"/dump {tmp_path / 'd'}")
        assert '"x"' in (tmp_path / "d" / "manifest.json").read_text()
        await submit(pilot, "!y = 2")
        app.prompt.text = f"/dump {tmp_path / 'd'}"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("n")
        await settle(pilot)
        assert '"y"' not in (tmp_path / "d" / "manifest.json").read_text()
        app.prompt.text = f"/dump {tmp_path / 'd'}"
        await pilot.press("enter")
        await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
        await pilot.press("y")
        await settle(pilot)
        await wait_for(pilot, lambda: '"y"' in (tmp_path / "d" / "manifest.json").read_text())
        await app.action_quit()
