"""`/load ID` and `--resume` show the snapshot's reading as a progress bar, as `/inject`
does (issue 34, item 4); Esc or Ctrl+C cancels a `/load` and the current session comes back
as it was (its conversation, its namespace, its recording). The read is held by a reader
the test controls: it stops at the loaded session's second variable until released."""

from __future__ import annotations

import threading
import time

import pytest

from cave_tui.app.startup import DataOptions
from cave_tui.dataio import dump as dump_module
from cave_tui.dataio.progress import Progress
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
from cave_tui.frontends.tui.widgets.load_progress import LoadBar

from .conftest import chat_text, settle, submit, wait_for
from .test_app_data import make_data_app
from .test_resume_transcript import _record

TWO = [
    "```python\nimport pandas as pd\nbirds = pd.DataFrame({'n': [1, 2]})\n"
    "fish = pd.DataFrame({'n': [3]})\n```",
    "```python\nfinal_answer('Made them.')\n```",
]


@pytest.fixture
def held_read(monkeypatch) -> tuple[threading.Event, list[str]]:
    """Reading a variable of a folder named in the returned list waits, from its second
    variable on, until the returned event is set."""
    released, folders = threading.Event(), []
    read = dump_module._load_safe
    seen = {"n": 0}

    def read_then_wait(checked, verify):  # type: ignore[no-untyped-def]
        if any(f in str(checked.path) for f in folders):
            seen["n"] += 1
            deadline = time.monotonic() + 30
            while seen["n"] >= 2 and not released.is_set() and time.monotonic() < deadline:
                time.sleep(0.01)
        return read(checked, verify)

    monkeypatch.setattr(dump_module, "_load_safe", read_then_wait)
    return released, folders


def _bar(app) -> LoadBar | None:
    bars = list(app.chat.query(LoadBar))
    return bars[0] if bars and bars[0].bar.progress > 0 and bars[0].query(".load-hint") else None


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_load_shows_its_progress_and_a_cancel_puts_the_session_back(tmp_path, held_read, key):
    released, folders = held_read
    sessions = tmp_path / "sessions"
    first = await _record(sessions, TWO, "make birds and fish")
    folders.append(first)
    app = make_data_app(
        ["```python\nother = 1\n```", "Made `other`."], DataOptions(sessions_dir=sessions)
    )
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await settle(pilot)
            await wait_for(pilot, lambda: app.services.session is not None)
            current = app.services.session.dir
            await submit(pilot, "make other")
            app.prompt.text = f"/load {first}"
            app.prompt.action_submit()
            await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
            app.screen.dismiss(True)
            await wait_for(pilot, lambda: _bar(app) is not None)
            bar = _bar(app)
            assert bar is not None and bar.text == f"reading {first} · 1 of 2 variables"
            await pilot.press(key)
            # The cancel resumes the current session again from its snapshot: slow under load.
            await wait_for(pilot, lambda: "was not loaded" in chat_text(app), timeout=30)
            await settle(pilot)
            assert f"session {current.name} is back as it was" in chat_text(app)
            assert not app.chat.query(LoadBar) and not app.loads.running
            names = app.services.runtime._ns
            assert names.get("other") == 1 and "birds" not in names and "fish" not in names
            assert app.services.session is not None and app.services.session.dir == current
            assert any(m["content"] == "make other" for m in app.services.agent.history)
            assert app.is_running
    finally:
        released.set()


async def test_resume_at_start_reports_the_variables_read(tmp_path):
    from cave_tui.app.config import Config
    from cave_tui.app.services import AppServices
    from cave_tui.app.startup import install
    from cave_tui.models import ScriptedModel

    sessions = tmp_path / "sessions"
    first = await _record(sessions, TWO, "make birds and fish")
    services = AppServices(Config(kernel=False), model=ScriptedModel([]))
    seen: list[tuple[Progress, str]] = []
    services.progress_hooks.append(lambda progress, label: seen.append((progress, label)))
    install(services, DataOptions(resume=first, sessions_dir=sessions))
    try:
        await services.start()
        reads = [p for p, label in seen if label == first]
        assert [p.done for p in reads] == [0, 1] and {p.total for p in reads} == {2}
        assert all(p.unit == "variables" and p.stage == "reading" for p in reads)
        assert {"birds", "fish"} <= set(await services.runtime.names())
    finally:
        await services.shutdown()


async def test_resume_in_the_app_shows_its_bar_until_the_start_is_done(tmp_path, held_read):
    released, folders = held_read
    sessions = tmp_path / "sessions"
    first = await _record(sessions, TWO, "make birds and fish")
    folders.append(first)
    app = make_data_app([], DataOptions(resume=first, sessions_dir=sessions))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: _bar(app) is not None)
            assert _bar(app).text == f"reading {first} · 1 of 2 variables"  # type: ignore[union-attr]
            released.set()
            await wait_for(pilot, lambda: app.services.session is not None)
            await settle(pilot)
            assert "Made them." in chat_text(app)
            assert not app.chat.query(LoadBar) and not app.loads.running  # gone once started
    finally:
        released.set()
