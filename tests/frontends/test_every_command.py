"""Every slash command, run for real in each front end (the app, `--plain`, `cave run`).

One scripted session per front end types every command in turn, as a user would, with a
real runtime, a real recording and a second recorded session on disk to /load and /replay.
Each command's own output must appear, and no command may answer that the front end cannot
do what it asked: that is how `/load` once failed in both front ends while a fake context
passed.
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import pytest
from prompt_toolkit.application import create_app_session
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from cave_tui.app.commands import CommandContext, load_commands
from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, install
from cave_tui.frontends.cli.front_end import CliFrontEnd
from cave_tui.frontends.repl.plain import repl_main
from cave_tui.frontends.tui.screens.confirm import ConfirmScreen
from cave_tui.frontends.tui.screens.detail import DetailScreen
from cave_tui.models import ScriptedModel
from cave_tui.session import SessionRecorder
from tests.frontends.tui.conftest import chat_text, make_app, settle, submit, wait_for
from tests.session.helpers import code, scripted_agent

# What a front end must never answer a command with.
REFUSALS = ("cannot do", "is not available", " failed: ")


@dataclass
class Step:
    """One command line, the text its output must contain, and whether it asks to confirm."""

    line: str
    expect: str | dict[str, str]  # by front end ("tui", "plain", "cli") when they differ
    confirm: bool = False
    outputs: list[str] = field(default_factory=list)

    def expected(self, front_end: str) -> str:
        return self.expect if isinstance(self.expect, str) else self.expect[front_end]


def script(other: str) -> list[Step]:
    """Every command (the aliases of /quit aside), in an order that makes each one useful."""
    return [
        Step("/help", "/inject"),
        Step("/vars", "n"),
        Step("/show n", {"tui": "", "plain": "int", "cli": "int"}),  # the app opens a screen
        Step("/model", "Model: `scripted`"),
        Step("/policy", "Policy: `standard`"),
        Step("/policy strict", "Policy set to `strict`"),
        Step("/approve", "Approval: `auto`"),
        Step("/approve auto", "Approval `auto`"),
        Step("/policies", "presets: off"),
        Step("/policies minimal,rewind", "Policies set to `minimal,rewind`"),
        Step(
            "/theme",
            {
                "tui": "Themes:",
                "plain": "this front end has no themes",
                "cli": "this front end has no themes",
            },
        ),
        Step("/skills", "charts"),
        Step("/skill charts", "activate_skill('charts')"),
        Step("/compact", "ompact"),
        Step("/cost", "tokens in"),
        Step("/config", "Config file:"),
        Step("/set max_steps 7", "`max_steps` set to `7`"),
        Step("/inject birds.csv as birds", "Injected `birds`"),
        Step("/retrieve birds", "birds.parquet"),
        Step("/restore birds", "Restored `birds`"),
        Step("/dump out", "variables"),
        Step("/save Monday", "Saved session"),
        Step("/sessions", "(current)"),
        Step("/export nb.ipynb", "Exported"),
        Step("/del birds", "Deleted `birds`"),
        Step(f"/replay {other}", "matches the recording"),
        Step(f"/load {other}", f"resumed session {other}", confirm=True),
        Step("/reset", "Namespace and conversation reset", confirm=True),
        Step("/clear", ""),
        Step("/quit", ""),
    ]


def covered(steps: list[Step]) -> set[str]:
    return {step.line.split()[0].lstrip("/") for step in steps}


async def recorded_session(sessions: Path) -> str:
    """A data file beside *sessions*, and a finished recording in it (for /load, /replay)."""
    (sessions.parent / "birds.csv").write_text("species,mass\nAdelie,3700\nGentoo,5076\n")
    agent = scripted_agent([code("kept = 'old'\nprint(kept)"), "Made `kept`."])
    recorder = SessionRecorder.create(sessions, title="other", agent=agent)
    await recorder.run("make kept")
    await recorder.close()
    await agent.runtime.stop()
    return recorder.id


def services_for(sessions: Path) -> AppServices:
    services = AppServices(Config(kernel=False), model=ScriptedModel(["unused"]))
    install(services, DataOptions(sessions_dir=sessions))
    return services


def test_the_script_runs_every_registered_command():
    names = {command.name for command in load_commands().all()}
    assert names == covered(script("x")), "add the new command to script()"


async def test_every_command_in_the_app(tmp_path):
    sessions = tmp_path / "sessions"
    other = await recorded_session(sessions)
    steps = script(other)
    app = make_app(["unused"])
    install(app.services, DataOptions(sessions_dir=sessions))
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.session is not None)
        await submit(pilot, "!n = 5")
        for step in steps:
            before = chat_text(app)
            if step.line == "/quit":
                await submit(pilot, step.line)
                await wait_for(pilot, lambda: not app.is_running)
                break
            app.prompt.text = step.line
            app.prompt.action_submit()
            if step.confirm:
                await wait_for(pilot, lambda: isinstance(app.screen, ConfirmScreen))
                await pilot.press("y")
            if step.line.startswith("/show"):
                await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen))
                await pilot.press("escape")
            await settle(pilot)
            if step.line.startswith("/replay"):
                await wait_for(pilot, lambda: "matches the recording" in chat_text(app), 30)
            if step.line == "/clear":
                assert "Deleted `birds`" not in chat_text(app)
            after = chat_text(app)  # what the step added (all of it when the chat was redrawn)
            step.outputs.append(after.removeprefix(before) if step.line != "/clear" else "")
        else:
            pytest.fail("/quit did not close the app")
    check(steps, "tui")
    assert app.services.session is not None and app.services.session.dir.name == other


async def test_every_command_in_plain_mode(tmp_path):
    sessions = tmp_path / "sessions"
    other = await recorded_session(sessions)
    steps = script(other)
    services = services_for(sessions)
    out = io.StringIO()
    console = Console(file=out, width=120, force_terminal=False, color_system=None)
    lines = ["!n = 5"]
    for step in steps:
        lines.append(step.line)
        if step.confirm:
            lines.append("y")
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("".join(line + "\r" for line in lines))
        assert await repl_main(services, console=console, history=False) == 0
    text = out.getvalue()
    for step in steps:
        step.outputs.append(text)  # one transcript: each command's output is looked up in it
    check(steps, "plain")
    assert services.session is not None and services.session.dir.name == other


def plain_text(markdown: str) -> str:
    """Text as a Markdown renderer shows it (no backticks or bold markers)."""
    return markdown.replace("`", "").replace("**", "")


async def test_every_command_in_cave_run(tmp_path, monkeypatch):
    """`cave run "/COMMAND"`'s front end, one command after another on one session."""
    monkeypatch.chdir(tmp_path)
    sessions = tmp_path / "sessions"
    other = await recorded_session(sessions)
    steps = script(other)
    services = services_for(sessions)
    out, err = io.StringIO(), io.StringIO()
    front_end = CliFrontEnd(
        services,
        yes=True,
        console=Console(file=out, width=120, color_system=None),
        errors=Console(file=err, width=120, color_system=None),
    )
    ctx = CommandContext(services, front_end)
    await services.start()
    registry = load_commands()
    try:
        async for _ in services.run_python("n = 5"):
            pass
        for step in steps:
            before = out.getvalue() + err.getvalue()
            await registry.dispatch(step.line, ctx)
            await front_end.drain()
            step.outputs.append((out.getvalue() + err.getvalue()).removeprefix(before))
    finally:
        await services.shutdown()
    check(steps, "cli")
    assert services.session is not None and services.session.dir.name == other


def check(steps: list[Step], front_end: str) -> None:
    problems = []
    for step in steps:
        shown = plain_text("".join(step.outputs))
        if plain_text(step.expected(front_end)) not in shown:
            problems.append(f"{step.line}: expected {step.expected(front_end)!r}")
        problems += [f"{step.line}: {word.strip()!r}" for word in REFUSALS if word in shown]
    assert not problems, problems
