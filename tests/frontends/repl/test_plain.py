"""`cave --plain`: the same commands and turns over prompt_toolkit (piped in, captured out)."""

from __future__ import annotations

import io

from prompt_toolkit.application import create_app_session
from prompt_toolkit.document import Document
from prompt_toolkit.input import create_pipe_input
from prompt_toolkit.output import DummyOutput
from rich.console import Console

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.frontends.repl.plain import SlashCompleter, repl_main
from cave_tui.models import ScriptedModel

REPLIES = [
    "Making it.\n\n```python\nimport pandas as pd\nframe = pd.DataFrame({'a': [1, 2, 3]})\n```",
    "`frame` has **3 rows**.",
]


async def run_lines(
    lines: list[str], replies=None, setup=None, **services_kw
) -> tuple[str, AppServices]:
    model = ScriptedModel(replies) if replies is not None else None
    services = AppServices(Config(kernel=False), model=model, **services_kw)
    if setup is not None:
        setup(services)
    exits = []
    services.exit_hooks.append(lambda: exits.append(True))
    out = io.StringIO()
    console = Console(file=out, width=100, force_terminal=False, color_system=None)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("".join(line + "\r" for line in lines))
        code = await repl_main(services, console=console, history=False)
    assert code == 0 and exits == [True]
    return out.getvalue(), services


async def test_task_python_and_commands():
    text, services = await run_lines(
        ["make a frame", "!print(frame['a'].sum())", "/vars", "/vras", "/quit"], REPLIES
    )
    assert "Making it." in text and "frame has 3 rows." in text
    assert "6" in text.splitlines()
    assert "frame" in text and "DataFrame" in text and "3x1" in text
    assert "Unknown command /vras. Did you mean /vars?" in text
    assert services.agent.history[-1]["content"] == "`frame` has **3 rows**."


async def test_no_model_explains_and_python_still_runs():
    text, _services = await run_lines(["hello", "!z = 5", "/vars", "/quit"], None)
    assert text.count("No model is configured") == 2
    assert "z" in text and "int" in text


async def test_reset_asks_on_the_prompt():
    text, _services = await run_lines(["!k = 1", "/reset", "y", "/vars", "/quit"], [])
    assert "Namespace and conversation reset." in text
    assert "No variables yet." in text


async def test_theme_is_not_available_in_plain_mode():
    text, _ = await run_lines(["/theme", "/quit"], [])
    assert "this front end has no themes" in text


def test_completer_offers_commands_with_help():
    completions = list(SlashCompleter().get_completions(Document("/sh"), None))
    assert [c.text for c in completions] == ["/show"]
    assert "detail view" in completions[0].display_meta_text
    assert list(SlashCompleter().get_completions(Document("hello"), None)) == []


async def test_plain_mode_records_the_session_and_dumps_on_quit(tmp_path):
    import json

    from cave_tui.app.startup import DataOptions, install

    csv = tmp_path / "t.csv"
    csv.write_text("a\n1\n2\n")
    model = ScriptedModel(REPLIES)
    services = AppServices(Config(kernel=False), model=model)
    install(services, DataOptions(inject=[str(csv)], dump=tmp_path / "out",
                                  sessions_dir=tmp_path / "s"))  # fmt: skip
    console = Console(file=io.StringIO(), width=100, force_terminal=False, color_system=None)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("make a frame\r/quit\r")
        assert await repl_main(services, console=console, history=False) == 0
    (folder,) = list((tmp_path / "s").iterdir())
    kinds = [
        json.loads(line)["type"] for line in (folder / "events.jsonl").read_text().splitlines()
    ]
    assert "injection" in kinds and "code" in kinds and "snapshot" in kinds
    assert kinds[-1] == "closed"
    assert json.loads((folder / "meta.json").read_text())["status"] == "closed"
    manifest = (tmp_path / "out" / "manifest.json").read_text()
    assert '"frame"' in manifest and '"t"' in manifest


async def test_replay_command_replays_then_continues_live(tmp_path):
    from cave_tui.app.startup import DataOptions, install

    services = AppServices(Config(kernel=False), model=ScriptedModel(REPLIES))
    install(services, DataOptions(sessions_dir=tmp_path / "s"))
    console = Console(file=io.StringIO(), width=100, force_terminal=False, color_system=None)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("make a frame\r/quit\r")
        assert await repl_main(services, console=console, history=False) == 0
    (folder,) = list((tmp_path / "s").iterdir())
    text, services = await run_lines(
        [f"/replay {folder}", "!print(frame['a'].sum() * 2)", "and now?", "/quit"],
        ["Still `frame`."],
    )
    assert "matches the recording" in text and "12" in text.splitlines()
    assert "Still frame." in text
    assert services.agent.history[-1]["content"] == "Still `frame`."
    assert any("frame has 3 rows" in str(m["content"]) or "3 rows" in str(m["content"])
               for m in services.agent.history)  # fmt: skip


async def test_a_failed_cells_figures_are_printed_as_saved(tmp_path, monkeypatch):
    """A cell (the agent's, and a `!` one) that draws and then raises: its figure is saved
    in the session and its path printed, as a successful cell's."""
    from cave_tui.app.startup import DataOptions, install

    monkeypatch.chdir(tmp_path)
    failing = "```python\nimport matplotlib.pyplot as plt\nplt.plot([1, 2])\n1 / 0\n```"
    services = AppServices(Config(kernel=False), model=ScriptedModel([failing, "It failed."]))
    install(services, DataOptions(sessions_dir=tmp_path / "s"))
    out = io.StringIO()
    console = Console(file=out, width=200, force_terminal=False, color_system=None)
    with create_pipe_input() as pipe, create_app_session(input=pipe, output=DummyOutput()):
        pipe.send_text("plot it\r!plt.plot([3]); undefined_name\r/quit\r")
        assert await repl_main(services, console=console, history=False) == 0
    (folder,) = list((tmp_path / "s").iterdir())
    text = out.getvalue()
    assert "ZeroDivisionError" in text and "NameError" in text
    for name in ("1-1-1.png", "u1-1.png"):
        assert f"figure saved: s/{folder.name}/figures/{name}" in text, text
        assert (folder / "figures" / name).is_file()
