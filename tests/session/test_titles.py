"""Issue 34, item 5: a session is titled by its first request (a task, a `!` cell or a slash
command: the first line, printable, at most 60 characters), once; a title given with
/save stays; the exit says the exact `cave --resume ID` line."""

from __future__ import annotations

import json
from pathlib import Path

from cave_tui.app.commands import load_commands
from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.models import ScriptedModel
from cave_tui.session import SessionRecorder, SessionStore
from cave_tui.session.title import TITLE_LIMIT, session_title, shown_title
from tests.helpers.front_end import RecordingContext
from tests.session.helpers import code, scripted_agent

REPLIES = [code("x = 1"), "one.", "two."]


def _meta(folder: Path) -> dict:
    return json.loads((folder / "meta.json").read_text())


async def _session(tmp_path: Path, *steps: tuple[str, str]) -> tuple[AppServices, Path]:
    """A front-end session (as the app and --plain run one) through `steps`: ("ask", TEXT)
    a turn, ("cell", CODE) the user's own cell; closed, its folder."""
    services = AppServices(Config(kernel=False), model=ScriptedModel(REPLIES))
    install(services, DataOptions(sessions_dir=tmp_path / "sessions"))
    await services.start()
    for kind, text in steps:
        stream = services.stream(text) if kind == "ask" else services.run_python(text)
        async for _ in stream:
            pass
    await services.shutdown()
    return services, SessionStore(tmp_path / "sessions").resolve("last")


async def test_the_first_request_titles_the_session_as_one_printable_line(tmp_path):
    first = "\n  Plot the [bold]flights\x1b[31m   by month\x07 ≠ **x**\nthen more"
    services, folder = await _session(tmp_path, ("ask", first), ("ask", "and now?"))
    assert _meta(folder)["title"] == "Plot the [bold]flights by month ≠ **x**"
    assert folder.name.endswith("-cave")  # named before the request: the label
    said = "\n".join(services.exit_messages)
    assert f"cave: resume this session with: cave --resume {folder.name}" in said
    assert f"--sessions-dir {folder.parent.absolute()}" in said  # not ./sessions: said


async def test_a_first_user_cell_titles_the_session_with_its_first_line(tmp_path):
    _, folder = await _session(tmp_path, ("cell", "\ny = 2  # the base\nz = 3"), ("ask", "go"))
    assert _meta(folder)["title"] == "!y = 2 # the base"


def test_a_long_first_line_is_cut_to_the_limit_with_an_ellipsis():
    title = session_title("word " * 40)
    assert len(title) == TITLE_LIMIT and title.endswith("…")
    assert session_title(" \n\t \n") == ""


async def test_a_first_command_titles_the_session_and_save_sets_a_given_title(tmp_path):
    agent = scripted_agent(REPLIES)
    ctx = RecordingContext(agent)
    session = SessionRecorder.create(tmp_path / "sessions", agent=agent)
    ctx.services.session = session
    assert session.meta["title"] == ""
    registry = load_commands()
    assert await registry.dispatch("/vars", ctx)
    assert session.meta["title"] == "/vars" and _meta(session.dir)["title"] == "/vars"
    await session.run("a request")
    assert session.meta["title"] == "/vars"  # set once
    assert await registry.dispatch("/save Monday\x1b]0;x\x07 analysis", ctx)
    assert session.meta["title"] == "Monday analysis"
    await session.close()


def test_old_sessions_list_a_title_from_their_folder_or_a_dash():
    assert shown_title("cave", "20250101-120000-cave") == "—"  # the app's old placeholder
    assert shown_title(None, "20250101-120000-plot-the-flights") == "plot the flights"
    assert shown_title("20250101-120000-x", "20250101-120000-x") == "x"  # a rebuilt meta.json
    assert shown_title({"a": 1}, "20250101-120000-session") == "—"
    assert shown_title("Sales\x1b[2J\nby region", "s") == "Sales by region"
