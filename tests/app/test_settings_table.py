"""The table of settings (`Config`): each declared once, with help and a check, and from it
the command line's flags, the config file's keys, the `CAVE_*` variables and `/set`."""

from __future__ import annotations

from dataclasses import fields
from pathlib import Path

import pytest
import typer.main

import cave_tui.frontends.cli.main as cli
from cave_tui.app.commands import load_commands
from cave_tui.app.commands.registry import CommandContext
from cave_tui.app.commands.settings import APPLY
from cave_tui.app.config import TABLE, Config, config_path, load_config
from cave_tui.app.services import AppServices
from cave_tui.app.settings import METADATA_KEY, Command, Setting
from cave_tui.frontends.cli.setting_options import flag_names
from tests.helpers.front_end import RecordingFrontEnd

NOT_SETTINGS = {"keymap", "sources", "warnings"}  # Config's bookkeeping, not settings
COMMANDS = {Command.APP: None, Command.RUN: "run", Command.DEMO: "demo",
            Command.REPLAY: "replay", Command.SANDBOX: "sandbox"}  # fmt: skip


def test_every_setting_is_declared_with_help_and_a_check():
    for f in fields(Config):
        if f.name in NOT_SETTINGS:
            continue
        declared = f.metadata.get(METADATA_KEY)
        assert isinstance(declared, Setting), f"{f.name}: declare it with setting(...)"
        assert declared.help.strip().endswith("."), f"{f.name}: no help"
        assert callable(declared.check), f"{f.name}: no check"
        with pytest.raises(ValueError):
            declared.check(f.name, object())  # a check that checks something
    assert [d.name for d in TABLE] == [f.name for f in fields(Config) if f.name not in NOT_SETTINGS]


def _params(command: Command) -> dict[str, tuple[set[str], bool]]:
    group = typer.main.get_command(cli.app)
    name = COMMANDS[command]
    click_command = group if name is None else group.commands[name]  # type: ignore[attr-defined]
    return {
        p.name: (set(p.opts) | set(p.secondary_opts), bool(getattr(p, "hidden", False)))
        for p in click_command.params
    }


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_setting_has_its_flags_on_the_commands_that_take_it(command):
    params = _params(command)
    expected = flag_names(command)
    for d in TABLE:
        if d.takes(command):
            assert params[d.name][0] == expected[d.name] and not params[d.name][1], d.name
            for old in d.setting.old_names:  # kept, hidden, for one release
                assert params[old] == ({f"--{old}"}, True)
        elif not (command is Command.RUN and d.name == "skills"):  # run's own --skills
            assert d.name not in params, (command, d.name)


def test_the_flags_keep_their_names():
    app = flag_names(Command.APP)
    assert app["model"] == {"--model", "-m"} and app["local_model"] == {"--gguf"}
    assert app["kernel"] == {"--kernel", "--in-process", "--no-kernel"}
    assert app["guard"] == {"--guard"} and app["policy"] == {"--policy"}
    assert app["policies"] == {"--policies"} and app["sandbox"] == {"--sandbox", "--no-sandbox"}


def _sample(d, tmp_path: Path) -> str:
    """A valid value of setting *d*, as typed after `/set NAME`."""
    samples = {"model": f"scripted:{tmp_path / 'm.yaml'}", "api_base": "http://127.0.0.1:9/v1",
               "local_model": "off", "workdir": str(tmp_path), "skills": str(tmp_path),
               "mount": str(tmp_path), "theme": "cave-light", "guard": "strict",
               "max_steps": "4", "policies": "minimal", "cell_timeout": "12",
               "gateway": "http://127.0.0.1:9", "gateway_token": "t"}  # fmt: skip
    value = samples.get(d.name, d.default)
    return str(value).lower() if isinstance(value, bool) else str(value)


class _Themed(RecordingFrontEnd):
    def theme_names(self) -> list[str]:
        return ["cave-dark", "cave-light"]


async def test_set_accepts_every_setting_and_the_file_and_environment_read_it(tmp_path):
    (tmp_path / "m.yaml").write_text('- "hi"\n')
    services = AppServices(Config(kernel=False))
    ui = _Themed()
    ctx = CommandContext(services, ui)
    registry = load_commands()
    for d in TABLE:
        assert (d.name in APPLY) == d.setting.live, d.name
        assert await registry.dispatch(f"/set {d.name} {_sample(d, tmp_path)}", ctx), ui.lines
        assert "set to" in ui.lines[-1][0] or "saved in" in ui.lines[-1][0]
    assert services.config.guard == "strict" and services.config.max_steps == 4
    assert ("set_theme", {"args": ("cave-light",)}) in ui.calls
    saved = load_config()  # what /set saved (the settings read at start) is read back
    assert saved.api_base == "http://127.0.0.1:9/v1" and saved.source("api_base") == "file"
    assert saved.cell_timeout == 12 and saved.mount == [str(tmp_path)]
    assert not await registry.dispatch("/set guard loose", ctx)
    assert "guard must be one of" in ui.lines[-1][0]
    assert not await registry.dispatch("/set colour red", ctx)
    assert "unknown setting 'colour'" in ui.lines[-1][0]
    for d in TABLE:  # every setting (and its old names) from the file and the environment
        config_path().write_text(f"{d.file_keys[-1]} = {_toml(_sample(d, tmp_path))}\n")
        assert load_config(environ={}).source(d.name) == "file", (d.name, load_config().warnings)
        for variable in d.env:
            env = {variable: _sample(d, tmp_path)}
            assert load_config(environ=env).source(d.name) == "env", variable


def _toml(text: str) -> str:
    return text if text in ("true", "false") or text.replace(".", "").isdigit() else repr(text)


def test_the_old_policy_name_is_read_and_saved_as_guard(monkeypatch):
    config_path().parent.mkdir(parents=True, exist_ok=True)
    config_path().write_text('policy = "strict"\n')
    assert load_config().guard == "strict" and load_config().source("policy") == "file"
    from cave_tui.app.config import save_setting

    save_setting("guard", "trusted")
    assert config_path().read_text() == 'guard = "trusted"\n'
    monkeypatch.setenv("CAVE_POLICY", "standard")
    assert load_config().guard == "standard"
    monkeypatch.setenv("CAVE_GUARD", "strict")
    assert load_config().guard == "strict"  # the new name wins over the old one
