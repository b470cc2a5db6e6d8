"""Resume and `/load ID` draw the recorded conversation again, in the app and in --plain."""

from __future__ import annotations

from cave_tui.app.startup import DataOptions
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
from cave_tui.frontends.tui.widgets.steplog import FoldedOutput, StepEntry

from .conftest import chat_text, settle, submit, wait_for
from .test_app_data import make_data_app

FIRST = [
    "Counting.\n\n```python\nbirds = ['Adelie', 'Gentoo', 'Chinstrap']\nprint(len(birds))\n```",
    "```python\nfinal_answer(f'There are {len(birds)} species.')\n```",
]


async def _record(sessions, replies=FIRST, task="How many species?") -> str:
    app = make_data_app(replies, DataOptions(sessions_dir=sessions))
    async with app.run_test() as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        session_id = app.services.session.id
        await submit(pilot, task)
        await app.action_quit()
    return session_id


def _log_outputs(app) -> list[str]:
    return [str(o.full) for o in app.steplog.query(FoldedOutput)]


async def test_resume_redraws_the_chat_and_the_log(tmp_path):
    sessions = tmp_path / "sessions"
    await _record(sessions)
    app = make_data_app([], DataOptions(resume="last", sessions_dir=sessions))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        await settle(pilot)
        text = chat_text(app)
        assert "How many species?" in text and "Counting." in text
        assert "There are 3 species." in text
        assert "resumed session" in text
        assert [e.outcome for e in app.steplog.query(StepEntry)] == ["ok", "ok"]
        assert _log_outputs(app)[0] == "3"
        assert "birds" in [row.name for row in app.inspector.table.rows]


async def test_load_replaces_the_conversation_and_draws_the_loaded_one(tmp_path):
    sessions = tmp_path / "sessions"
    first = await _record(sessions)
    app = make_data_app(
        ["```python\nother = 1\n```", "Made `other`."], DataOptions(sessions_dir=sessions)
    )
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        await submit(pilot, "make other")
        assert "Made `other`." in chat_text(app)
        app.prompt.text = f"/load {first}"
        app.prompt.action_submit()
        # Mounted, with its buttons, before it is answered (as a person would see it first).
        await wait_for(
            pilot, lambda: isinstance(app.screen, ConfirmScreen) and app.screen.query("#no")
        )
        app.screen.dismiss(True)
        await wait_for(pilot, lambda: "There are 3 species." in chat_text(app))
        await settle(pilot)
        text = chat_text(app)
        assert "cannot do" not in text and "make other" not in text
        assert "How many species?" in text
        names = [row.name for row in app.inspector.table.rows]
        assert "birds" in names and "other" not in names
        await submit(pilot, "!print(len(birds))")
        assert _log_outputs(app)[-1] == "3"


async def test_plain_load_prints_the_loaded_conversation(tmp_path, monkeypatch):
    from tests.frontends.repl.test_plain import run_lines

    sessions = tmp_path / "sessions"
    first = await _record(sessions)
    monkeypatch.chdir(tmp_path)
    from cave_tui.app.startup import install

    text, _services = await run_lines(
        [f"/load {first}", "y", "/quit"],
        [],
        setup=lambda services: install(services, DataOptions(sessions_dir=sessions)),
    )
    assert "not available" not in text
    assert "How many species?" in text and "There are 3 species." in text
