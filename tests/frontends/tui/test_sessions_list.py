"""Issue 34, item 5: `/sessions` in the app and in `cave --plain` lists each session's title,
date, turns, variables, model and status, newest first, with the `/load ID` that opens it;
a hostile title (markup, Markdown, terminal control) is shown as the text it is."""

from __future__ import annotations

import io
import json
import time
from pathlib import Path

from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console
from textual.geometry import Region

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.frontends.repl.plain import repl_main
from cave_tui.frontends.tui.widgets.chat import Notice
from cave_tui.models import ScriptedModel

from .conftest import submit, wait_for
from .test_app_data import make_data_app

HOSTILE = "**Bold** [red]x[/] `tick` <b>y</b> \x1b]52;c;aGk=\x07\x1b[2J\u202eend"
SHOWN = "**Bold** [red]x[/] `tick` <b>y</b> end"  # every character a character
OLD_ID = "20250101-090000-old"


def _old_session(root: Path) -> None:
    """A session recorded earlier (by hand): 2 turns, a snapshot of 3 variables."""
    folder = root / OLD_ID
    (folder / "namespace").mkdir(parents=True)
    (folder / "events.jsonl").write_text('{"seq": 1, "type": "session"}\n')
    meta = {"title": HOSTILE, "turns": 2, "model": "openai/gpt-4o", "status": "completed"}
    (folder / "meta.json").write_text(json.dumps(meta))
    variables = [{"name": n, "format": "json", "file": f"{n}.json"} for n in "abc"]
    (folder / "namespace" / "manifest.json").write_text(json.dumps({"variables": variables}))


def _rendered(notice: Notice) -> str:
    """The notice as drawn (all of it, scrolled into view or not)."""
    lines = notice.render_lines(Region(0, 0, notice.region.width, notice.region.height))
    return "\n".join(str(line.text) for line in lines)


async def test_sessions_in_the_app_lists_titles_facts_and_how_to_open_each(tmp_path):
    _old_session(tmp_path / "s")
    app = make_data_app(["ok"], DataOptions(sessions_dir=tmp_path / "s"))
    async with app.run_test(size=(120, 40)) as pilot:
        await wait_for(pilot, lambda: app.services.session is not None)
        current = app.services.session.id
        await submit(pilot, "Sales by region")
        await wait_for(pilot, lambda: app.services.session.turn == 1)
        await submit(pilot, "/sessions")
        await wait_for(pilot, lambda: "Sessions in" in list(app.chat.query(Notice))[-1].text)
        shown = " ".join(_rendered(list(app.chat.query(Notice))[-1]).split())
    assert f"/load {current} (current)" in shown  # newest first
    assert f"/load {OLD_ID} · 2025-01-01" not in shown  # the date is the last update's
    assert shown.index(current) < shown.index(OLD_ID)
    assert "Sales by region · 1 turn · " in shown and "scripted · running" in shown
    assert f"{SHOWN} · 2 turns · 3 variables · openai/gpt-4o · completed" in shown
    today = time.strftime("%Y-%m-%d")
    assert f"/load {OLD_ID} · {today}" in shown


async def test_sessions_in_plain_mode_lists_the_same(tmp_path):
    _old_session(tmp_path / "s")
    services = AppServices(Config(kernel=False), model=ScriptedModel(["ok"]))
    install(services, DataOptions(sessions_dir=tmp_path / "s"))
    out = io.StringIO()
    console = Console(file=out, width=160, force_terminal=False, color_system=None)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("/sessions\r/quit\r")
        assert await repl_main(services, console=console, history=False) == 0
    shown = " ".join(out.getvalue().split())
    current = services.session.id
    assert f"/load {current} (current)" in shown and f"/load {OLD_ID}" in shown
    assert "/sessions · 0 turns · scripted · running" in shown  # titled by the command
    assert f"{SHOWN} · 2 turns · 3 variables · openai/gpt-4o · completed" in shown
    assert "\x1b" not in out.getvalue() and "\u202e" not in out.getvalue()
