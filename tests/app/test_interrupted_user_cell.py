"""Issue 31, item 9: a `!` cell interrupted by the user has an outcome record (interrupted,
with what it printed), so a resumed session shows it stopped, not still running, with its
output; a finished `!` cell comes back with its output too."""

from __future__ import annotations

import asyncio
from pathlib import Path

from rich.console import Console

from cave_tui.agent import events as ev
from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.frontends.repl.plain import draw_transcript
from cave_tui.session import SessionStore, read_session
from cave_tui.session.transcript import transcript

SLOW = "import time\nprint('be' + 'gun', flush=True)\ntime.sleep(60)"


async def test_an_interrupted_user_cell_is_recorded_and_resumes_with_its_output(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    services = AppServices(Config(kernel=False))
    features = install(services, DataOptions(sessions_dir=tmp_path / "s"), announce=False)
    await services.start()
    try:
        async for _ in services.run_python("print('first answer', 6 * 7)"):
            pass
        begun = asyncio.Event()

        async def slow() -> None:
            async for event in services.run_python(SLOW):
                if isinstance(event, ev.OutputEvent) and "begun" in event.content:
                    begun.set()

        task = asyncio.create_task(slow())
        await asyncio.wait_for(begun.wait(), 20)
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)
    finally:
        await services.shutdown()
    records = read_session(SessionStore(tmp_path / "s").resolve(features.recorder.id)).records
    outcomes = [r for r in records if r.get("agent") == "user" and r["type"] != "code"]
    assert [(r["cell"], r["type"]) for r in outcomes] == [
        (1, "execution_output"),
        (2, "execution_error"),
    ]
    assert outcomes[1]["interrupted"] is True and "begun" in outcomes[1]["output"]
    shown = transcript(records)
    console = Console(record=True, width=100)
    draw_transcript(console, shown)
    text = console.export_text()
    assert "first answer 42" in text and "begun" in text, text
    assert "interrupted" in text, text


async def test_a_user_cell_cut_off_with_cave_resumes_as_stopped(
    tmp_path: Path, monkeypatch
) -> None:
    monkeypatch.chdir(tmp_path)
    services = AppServices(Config(kernel=False))
    features = install(services, DataOptions(sessions_dir=tmp_path / "s"), announce=False)
    await services.start()
    try:
        async for _ in services.run_python("x = 1"):
            pass
        # cave killed while the next cell ran: its code was recorded, its outcome never was
        features.recorder.record_user_cell(
            ev.CodeEvent(content="y = 2", code="y = 2", agent=ev.USER_AGENT)
        )
    finally:
        await services.shutdown()
    records = read_session(SessionStore(tmp_path / "s").resolve(features.recorder.id)).records
    shown = [e for e in transcript(records) if e.agent == ev.USER_AGENT]
    assert [type(e) for e in shown] == [
        ev.CodeEvent,
        ev.ExecutionOutputEvent,
        ev.CodeEvent,
        ev.ExecutionErrorEvent,
    ]
    assert shown[3].interrupted and "did not finish" in shown[3].content
