"""The `cave` command line: shared options, the fast path, `cave run` exit codes, --help."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import typer.main

import cave_tui.frontends.cli.main as cli
from cave_tui.app.settings import Command
from cave_tui.app.startup import DataOptions
from cave_tui.frontends.cli.setting_options import flag_names

CAVE = Path(sys.executable).with_name("cave")


def cave(*args: str, env_dir: Path) -> subprocess.CompletedProcess[str]:
    env = {
        "PATH": "/usr/bin:/bin",
        "CAVE_CONFIG_DIR": str(env_dir / "config"),
        "CAVE_DATA_DIR": str(env_dir / "data"),
        "LITELLM_LOCAL_MODEL_COST_MAP": "True",
        "CAVE_LOCAL_MODEL": "off",  # no embedded model: these runs have no model at all
        # in process, as in tests/conftest.py: these runs are about the command line, not
        # the runtime (a kernel per run was most of this file's time)
        "CAVE_KERNEL": "0",
    }
    return subprocess.run(
        [str(CAVE), *args], capture_output=True, text=True, env=env, timeout=60, check=False
    )


def test_fast_path_parses_every_app_option(tmp_path):
    flags = cli.fast_app_flags(
        [
            "--model",
            "scripted:x.yaml",
            "--api-base",
            "http://h",
            "--gguf",
            "m.gguf",
            "--kernel",
            "--memory-limit",
            "4G",
            "--sandbox",
            "--allow-net",
            "--workdir",
            str(tmp_path),
            "--policy",
            "strict",
            "--theme",
            "cave-light",
            "--skills",
            "sk",
            "--max-steps",
            "3",
            "--policies",
            "minimal,rewind",
            "--cell-timeout",
            "2.5",
            "--first-token-timeout",
            "120",
            "--stream-idle-timeout",
            "7.5",
            "--mount",
            f"{tmp_path}:ro",
            "--mount",
            str(tmp_path),
            "--plain",
            "--inject",
            "a.csv",
            "--inject",
            "b.parquet:b",
            "--load",
            "d",
            "--dump",
            "out",
            "--trust",
            "--resume",
            "last",
            "--sessions-dir",
            "s",
        ]
    )
    assert dict(flags.settings) == {
        "model": "scripted:x.yaml", "api_base": "http://h", "local_model": "m.gguf",
        "kernel": True, "memory_limit": "4G", "sandbox": True, "allow_net": True,
        "mount": [f"{tmp_path}:ro", str(tmp_path)], "workdir": str(tmp_path), "guard": "strict",
        "theme": "cave-light", "skills": "sk", "max_steps": 3, "policies": "minimal,rewind",
        "cell_timeout": 2.5, "first_token_timeout": 120.0, "stream_idle_timeout": 7.5,
    }  # fmt: skip
    assert flags.plain is True and flags.data == DataOptions(
        inject=["a.csv", "b.parquet:b"], load=Path("d"), dump=Path("out"), trust=True,
        resume="last", sessions_dir=Path("s"),
    )  # fmt: skip
    assert cli.fast_app_flags([]).plain is False
    assert cli.fast_app_flags(["--no-kernel"]).get("kernel") is False
    assert cli.fast_app_flags(["--in-process"]).get("kernel") is False
    assert cli.fast_app_flags([]).get("kernel") is None  # the config's default: the kernel
    assert cli.fast_app_flags(["-m", "x"]).get("model") == "x"
    assert cli.fast_app_flags(["--no-sandbox"]).get("sandbox") is False
    assert cli.fast_app_flags([]).get("sandbox") is None  # the config's default: where it works


def test_fast_path_leaves_everything_else_to_typer():
    for argv in (["run", "task"], ["--help"], ["demo"], ["--bogus"], ["--max-steps", "many"],
                 ["--model"], ["--version", "--plain"]):  # fmt: skip
        assert cli.fast_app_flags(argv) is None, argv


def test_fast_path_and_typer_know_the_same_options():
    command = typer.main.get_command(cli.app)
    typer_names = {p.name for p in command.params} - {"version"}
    settings = flag_names(Command.APP)
    assert typer_names == set(settings) | set(cli.LAUNCH_OPTIONS)
    for param in command.params:
        declared = set(param.opts) | set(getattr(param, "secondary_opts", []))
        if param.name in settings:
            assert declared == settings[param.name], param.name
        elif param.name in cli.LAUNCH_OPTIONS:
            assert declared == set(cli.LAUNCH_OPTIONS[param.name][0]), param.name


def test_help_lists_the_options_and_subcommands(tmp_path):
    result = cave("--help", env_dir=tmp_path)
    assert result.returncode == 0
    for option in ("--model", "--api-base", "--kernel", "--in-process", "--policy", "--theme",
                   "--skills", "--plain", "--version", "run", "demo"):  # fmt: skip
        assert option in result.stdout
    assert cave("--version", env_dir=tmp_path).stdout.startswith("cave ")


def test_run_exit_codes_and_json(tmp_path):
    done = tmp_path / "done.yaml"
    done.write_text('- "```python\\nx = 2\\n```"\n- "x is 2."\n')
    result = cave("run", "set x", "--model", f"scripted:{done}", "--json", env_dir=tmp_path)
    assert result.returncode == 0, result.stderr
    kinds = [json.loads(line)["type"] for line in result.stdout.splitlines()]
    assert kinds[:2] == ["session", "user"] and kinds[-2:] == ["final_response", "status"]
    looping = tmp_path / "loop.yaml"
    looping.write_text('- "```python\\nx = 1\\n```"\n')
    result = cave("run", "t", "--model", f"scripted:{looping}", "--max-steps", "1",
                  env_dir=tmp_path)  # fmt: skip
    assert result.returncode == 1
    result = cave("run", "t", "--model", f"scripted:{looping}", env_dir=tmp_path)
    assert result.returncode == 2  # the script runs out: an error
    result = cave("run", "t", env_dir=tmp_path)
    assert result.returncode == 2 and "no model configured" in result.stderr


def test_bad_flags_get_typer_messages(tmp_path):
    result = cave("--model", "scripted:/nope.yaml", env_dir=tmp_path)
    assert result.returncode == 2 and "script file not found" in result.stderr
    result = cave("--policy", "loose", env_dir=tmp_path)
    assert result.returncode == 2 and "unknown policy 'loose'" in result.stderr


def _cave_here(*args: str, env_dir: Path) -> subprocess.CompletedProcess[str]:
    """`cave` as `cave()` runs it, importing cave_tui from where this test does."""
    import os

    env = {"PYTHONPATH": os.pathsep.join(sys.path)}
    return subprocess.run(
        [str(CAVE), *args], capture_output=True, text=True, timeout=60, check=False,
        env={**env, "PATH": "/usr/bin:/bin", "CAVE_CONFIG_DIR": str(env_dir / "config"),
             "CAVE_DATA_DIR": str(env_dir / "data"), "CAVE_LOCAL_MODEL": "off",
             "CAVE_KERNEL": "0", "LITELLM_LOCAL_MODEL_COST_MAP": "True"},
    )  # fmt: skip


def test_guard_is_the_checker_flag_and_policy_its_deprecated_alias(tmp_path):
    done = tmp_path / "done.yaml"
    done.write_text('- "```python\\nimport os\\nx = os.getpid()\\n```"\n- "done."\n')
    model = f"scripted:{done}"
    old = _cave_here("run", "t", "--model", model, "--policy", "trusted", "--json",
                     env_dir=tmp_path)  # fmt: skip
    assert old.returncode == 0, old.stderr
    assert "--policy is deprecated" in old.stderr and "use --guard" in old.stderr
    assert '"security_error"' not in old.stdout  # trusted: the checker refused nothing
    new = _cave_here("run", "t", "--model", model, "--guard", "trusted", "--json", env_dir=tmp_path)
    assert new.returncode == 0 and "deprecated" not in new.stderr
    bad = _cave_here("run", "t", "--guard", "loose", env_dir=tmp_path)
    assert bad.returncode == 2 and "--guard" in bad.stderr and "unknown guard" in bad.stderr


PROTOCOL_ARGV = {
    "mcp": [
        "mcp", "--in-process", "--guard", "strict", "--max-steps", "3", "--skills", "a",
        "--skills", "b", "--http", "127.0.0.1:0", "--inject", "x.csv", "--inject", "y.parquet:y",
        "--load", "d", "--dump", "out", "--trust", "--resume", "last", "--sessions-dir", "s",
    ],
    "acp": [
        "acp", "--kernel", "--approve", "ask", "--skills", "a", "--inject", "x.csv", "--dump", "o",
    ],
}  # fmt: skip


def test_mcp_and_acp_are_parsed_without_typer_to_what_typer_parses(monkeypatch):
    """A client waits for their first answer: typer's pydantic adapters stay out of it."""
    calls: list[tuple[object, ...]] = []
    monkeypatch.setattr(cli, "serve_mcp", lambda *a: calls.append(("mcp", *a)) or 0)
    monkeypatch.setattr(cli, "serve_acp", lambda *a: calls.append(("acp", *a)) or 0)
    for argv in PROTOCOL_ARGV.values():
        try:
            cli.app(argv, standalone_mode=False)
        except typer.Exit:
            pass
    by_typer = list(calls)
    calls.clear()

    def no_typer(*args: object, **kwargs: object) -> None:
        raise AssertionError("typer parsed it")

    monkeypatch.setattr(cli, "app", no_typer)
    for argv in PROTOCOL_ARGV.values():
        monkeypatch.setattr(sys, "argv", ["cave", *argv])
        try:
            cli.main()
        except SystemExit as exc:
            assert exc.code == 0
    assert calls == by_typer and len(calls) == 2
    assert calls[0][1]["guard"] == "strict" and calls[0][2] == ["a", "b"]  # type: ignore[index]
    assert calls[0][4] == DataOptions(
        inject=["x.csv", "y.parquet:y"], load=Path("d"), dump=Path("out"), trust=True,
        resume="last", sessions_dir=Path("s"),
    )  # fmt: skip


def test_a_protocol_command_line_the_fast_path_does_not_take_goes_to_typer(monkeypatch):
    """--help, an unknown flag and a bad value get typer's usual answers."""
    monkeypatch.setattr(cli, "serve_mcp", lambda *a: 0)
    for argv in (["mcp", "--help"], ["mcp", "--nope"], ["acp", "--max-steps", "x"]):
        assert cli.fast_protocol_command(argv) is None
    assert cli.fast_protocol_command(["run", "x"]) is None
