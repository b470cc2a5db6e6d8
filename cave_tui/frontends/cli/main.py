"""The `cave` command line (typer).

`cave --version` is answered before typer or anything heavy is imported, and
every subcommand imports what it needs inside its body, so `--help` stays fast.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from dataclasses import replace
from pathlib import Path
from typing import Annotated, Any

import typer

from cave_tui import __version__
from cave_tui.app.launch_options import LaunchOptions
from cave_tui.app.settings import Command, SettingValue
from cave_tui.app.startup import DataOptions
from cave_tui.frontends.cli.data_commands import (
    data_options,
    normalize_argv,
    replay_command,
    run_task,
)
from cave_tui.frontends.cli.launch import (
    build_services,
    open_replay,
    open_session,
    run_to_the_end,
)
from cave_tui.frontends.cli.setting_options import (
    argparse_options,
    given_settings,
    setting_options,
)
from cave_tui.printable import printable

app = typer.Typer(
    name="cave",
    help="A terminal workbench for an LLM agent that works on live Python objects.",
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

# -- the options of `cave` itself that are not settings -------------------------------------
# The settings' flags (--model, --guard, …) are made from the table of settings
# (`cave_tui.app.config.Config`, see setting_options.py); these are how `cave` opens.
# name -> (flags, help, type); typer's declarations below and the fast path both read it.
LAUNCH_OPTIONS: dict[str, tuple[tuple[str, ...], str, type]] = {
    "plain": (("--plain",), "Line-mode REPL (prompt_toolkit) instead of the app.", bool),
    # data and sessions, wired by cave_tui.app.startup
    "inject": (
        ("--inject",),
        "Load PATH[:NAME][:encoding=ENC][:sep=SEP][:sheet=NAME] (or pkg:MODULE.ATTR[:NAME]) "
        "into the namespace; PATH[:NAME]:lazy[=dask] binds a lazy frame, :eager loads whole "
        "above lazy_above; repeatable.",
        list,
    ),
    "load": (("--load",), "Restore a dump folder into the namespace.", str),
    "dump": (("--dump",), "Dump every variable to DIR on exit (with manifest.json).", str),
    "trust": (("--trust",), "Allow loading pickle/dill files (they can run code).", bool),
    "resume": (("--resume",), "Resume a recorded session: an ID, or last.", str),
    "sessions_dir": (("--sessions-dir",), "Where sessions are recorded (./sessions).", str),
}
LIST_METAVARS = {"inject": "PATH[:NAME]"}  # one value of a repeatable


def _opt(name: str) -> Any:
    flags, help_, kind = LAUNCH_OPTIONS[name]
    if kind is list:  # repeatable: show what one value looks like, not list[str]
        return typer.Option(*flags, help=help_, metavar=LIST_METAVARS[name])
    return typer.Option(*flags, help=help_)


RunSkillsOpt = Annotated[
    list[str] | None,
    typer.Option(
        "--skills",
        help="A folder of Agent Skills (repeatable). ./skills, the user config dir's "
        "skills/ and the bundled skills are always searched.",
    ),
]
PlainOpt = Annotated[bool, _opt("plain")]
InjectOpt = Annotated[list[str] | None, _opt("inject")]
LoadOpt = Annotated[str | None, _opt("load")]
DumpOpt = Annotated[str | None, _opt("dump")]
TrustOpt = Annotated[bool, _opt("trust")]
ResumeOpt = Annotated[str | None, _opt("resume")]
SessionsDirOpt = Annotated[str | None, _opt("sessions_dir")]


def _data(
    inject: list[str] | None,
    load: str | None,
    dump: str | None,
    trust: bool,
    resume: str | None,
    sessions_dir: str | None,
) -> DataOptions:
    return DataOptions(
        inject=list(inject or []),
        load=Path(load) if load else None,
        dump=Path(dump) if dump else None,
        trust=trust,
        resume=resume or None,
        sessions_dir=Path(sessions_dir) if sessions_dir else None,
    )


def fast_app_flags(argv: list[str]) -> LaunchOptions | None:
    """Parse `cave [APP OPTIONS]` with argparse, or None to leave it to typer.

    Opening the app is the common case and typer's option coercion (pydantic
    adapters) costs ~0.15 s of start-up; anything else (a subcommand, --help, a
    mistake) returns None and typer handles it, with its usual messages.
    """
    parsed = _fast_parse(argv, Command.APP, LAUNCH_OPTIONS)
    if parsed is None:
        return None
    settings, launch = parsed
    return LaunchOptions(settings=settings, plain=bool(launch["plain"]), data=_launch_data(launch))


# `cave mcp` and `cave acp`: a client starts them and waits for their first answer, so they
# are parsed without typer too (its pydantic adapters cost ~0.3-0.5 s on a loaded machine).
SKILLS_OPTION: tuple[tuple[str, ...], str, type] = (("--skills",), "", list)
HTTP_OPTION: tuple[tuple[str, ...], str, type] = (("--http",), "", str)
PROTOCOL_OPTIONS = {name: spec for name, spec in LAUNCH_OPTIONS.items() if name != "plain"}
PROTOCOL_COMMANDS = {
    "mcp": (Command.MCP, {**PROTOCOL_OPTIONS, "skills": SKILLS_OPTION, "http": HTTP_OPTION}),
    "acp": (Command.ACP, {**PROTOCOL_OPTIONS, "skills": SKILLS_OPTION}),
}


def fast_protocol_command(argv: list[str]) -> int | None:
    """Run `cave mcp …`/`cave acp …` parsed with argparse (its exit code), or None to leave
    *argv* to typer (another command, --help, a mistake: typer's usual messages)."""
    if not argv or argv[0] not in PROTOCOL_COMMANDS:
        return None
    command, options = PROTOCOL_COMMANDS[argv[0]]
    parsed = _fast_parse(argv[1:], command, options)
    if parsed is None:
        return None
    settings, given = parsed
    skills = list(given["skills"] or [])
    try:
        if command is Command.MCP:
            return serve_mcp(settings, skills, given["http"], _launch_data(given))
        return serve_acp(settings, skills, _launch_data(given))
    except typer.BadParameter:
        return None  # typer says what is wrong, its usual way


def _fast_parse(
    argv: list[str], command: Command, options: dict[str, tuple[tuple[str, ...], str, type]]
) -> tuple[dict[str, SettingValue], dict[str, Any]] | None:
    """*argv* parsed with argparse: *command*'s settings given, checked, and the values of
    *options* (name -> (flags, help, type)); None when argparse or a check refuses it."""
    if any(arg in ("-h", "--help", "--version") for arg in argv):
        return None
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    argparse_options(parser, command)
    for name, (flags, _, kind) in options.items():
        if kind is bool:
            parser.add_argument(*flags, dest=name, action="store_true")
        elif kind is list:
            parser.add_argument(*flags, dest=name, action="append", default=None)
        else:
            parser.add_argument(*flags, dest=name, default=None)
    try:
        namespace, rest = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit, ValueError):
        return None
    if rest:
        return None
    parsed = vars(namespace)
    own = {name: parsed.pop(name) for name in options}
    try:
        settings = given_settings(parsed)
    except typer.BadParameter:
        return None  # typer says what is wrong, its usual way
    return settings, own


def _launch_data(given: dict[str, Any]) -> DataOptions:
    return _data(
        given["inject"],
        given["load"],
        given["dump"],
        bool(given["trust"]),
        given["resume"],
        given["sessions_dir"],
    )


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"cave {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
@setting_options(Command.APP)
def root(
    ctx: typer.Context,
    settings: dict[str, SettingValue] | None = None,
    plain: PlainOpt = False,
    inject: InjectOpt = None,
    load: LoadOpt = None,
    dump: DumpOpt = None,
    trust: TrustOpt = False,
    resume: ResumeOpt = None,
    sessions_dir: SessionsDirOpt = None,
    version: Annotated[
        bool,
        typer.Option(
            "--version",
            callback=_version_callback,
            is_eager=True,
            help="Print the version and exit.",
        ),
    ] = False,
) -> None:
    """Open cave (the app, or --plain for a line-mode REPL).

    Subcommands: run (one task), sessions (the recorded ones), demo (no API key needed).
    Settings come from config.toml, then CAVE_* environment variables, then these flags.
    """
    if ctx.invoked_subcommand is not None:
        return
    options = LaunchOptions(
        settings=settings or {},
        plain=plain,
        data=_data(inject, load, dump, trust, resume, sessions_dir),
    )
    raise typer.Exit(open_session(options))


@app.command()
@data_options
@setting_options(Command.RUN)
def run(
    task: Annotated[
        str,
        typer.Argument(
            help="The task for the agent, a slash command (/vars, /export …) or !CODE "
            "(your own Python, run as typed: no model)."
        ),
    ],
    settings: dict[str, SettingValue] | None = None,
    skills: RunSkillsOpt = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print events as JSON lines.")] = False,
    yes: Annotated[
        bool, typer.Option("--yes", "-y", help="Answer yes to a command's questions.")
    ] = False,
    data: DataOptions | None = None,
) -> None:
    """Run one task (or one slash command, or one `!` cell of your own), recorded as a session.

    Exit 0 on a final answer (a command that did what it was asked), 1 on max steps, 2 on
    an error, 3 when --dump could not be written (the session keeps the namespace). A
    command needs no model: `cave run --load DUMP "/retrieve df out.parquet"`.
    """
    own = task.lstrip().startswith(("/", "!"))  # a command or the user's own cell: no model
    options = data or DataOptions()
    launch = LaunchOptions(settings=settings or {}, data=options)
    services = build_services(launch, need_model=not own, skill_dirs=skills or [])
    raise typer.Exit(run_to_the_end(services, run_task(services, task, as_json, options, yes=yes)))


@app.command("mcp")
@data_options
@setting_options(Command.MCP)
def mcp_command(
    settings: dict[str, SettingValue] | None = None,
    skills: RunSkillsOpt = None,
    http: Annotated[
        str | None,
        typer.Option(
            "--http",
            metavar="HOST:PORT",
            help="Serve streamable HTTP instead of stdio: PORT or :PORT is 127.0.0.1 (0: any "
            "free port); a bearer token is printed (CAVE_MCP_TOKEN fixes it).",
        ),
    ] = None,
    data: DataOptions | None = None,
) -> None:
    """Serve the live namespace to an MCP client over stdio (tools: run, ask, list_variables,
    describe, inject, retrieve; resources: cave://namespace, cave://variable/NAME).

    Register it in a client, e.g. `claude mcp add cave -- cave mcp`. The client's cells are
    checked by the guard; the session is recorded as `cave run`'s. Exit 0 when the client
    closes the connection, 2 when the start failed, 3 when --dump could not be written.
    With --http HOST:PORT it serves http://HOST:PORT/mcp until SIGTERM or Ctrl+C.
    """
    raise typer.Exit(serve_mcp(settings or {}, skills or [], http, data or DataOptions()))


def serve_mcp(
    settings: dict[str, SettingValue], skills: list[str], http: str | None, data: DataOptions
) -> int:
    """`cave mcp`'s work once its command line is parsed: its exit code. A bad setting
    raises `typer.BadParameter` before anything is served (the socket closed)."""
    from cave_tui.frontends.mcp import serve  # the SDK is imported while the runtime starts

    listener = None
    if http is not None:
        from cave_tui.frontends.mcp.http_socket import (
            HttpSetupError,
            listen,
            parse_address,
            token_from,
        )

        try:
            listener = listen(parse_address(http), token_from(os.environ))
        except HttpSetupError as exc:
            typer.echo(printable(f"cave: {exc}"), err=True)
            return 2
    launch = LaunchOptions(settings=settings, data=data)
    try:
        services = build_services(launch, need_model=False, skill_dirs=skills, local_later=True)
    except typer.BadParameter:
        if listener is not None:
            listener.close()
        raise
    return run_to_the_end(services, serve(services, data, listener))


@app.command("acp")
@data_options
@setting_options(Command.ACP)
def acp_command(
    settings: dict[str, SettingValue] | None = None,
    skills: RunSkillsOpt = None,
    data: DataOptions | None = None,
) -> None:
    """Be the agent of an Agent Client Protocol front end (Zed, Toad, …) over stdio.

    Each prompt is a turn of cave's agent on the live namespace; each cell a tool call;
    --approve ask asks the client before each cell; cancel interrupts the cell. Sessions
    are recorded as `cave run`'s and can be loaded by id. Exit 0 when the client closes
    the connection, 2 when the start failed, 3 when --dump could not be written.
    """
    raise typer.Exit(serve_acp(settings or {}, skills or [], data or DataOptions()))


def serve_acp(settings: dict[str, SettingValue], skills: list[str], data: DataOptions) -> int:
    """`cave acp`'s work once its command line is parsed: its exit code."""
    from cave_tui.frontends.acp import serve  # the SDK is imported while the runtime starts

    launch = LaunchOptions(settings=settings, data=data)
    services = build_services(launch, need_model=False, skill_dirs=skills)
    return run_to_the_end(services, serve(services, data))


@app.command()
@setting_options(Command.DEMO)
def demo(
    speed: Annotated[float, typer.Option("--speed", help="Replay speed factor.")] = 1.0,
    headless: Annotated[bool, typer.Option("--headless", help="Print the demo (no TUI).")] = False,
    replay: Annotated[
        bool, typer.Option("--replay", help="Replay the recorded model replies (no model).")
    ] = False,
    settings: dict[str, SettingValue] | None = None,
) -> None:
    """The NYC flights analysis: asked live of the embedded (or --model) model, or replayed."""
    from cave_tui.app.demo import demo_plan, demo_session_path, run_demo, run_live_demo

    launch = LaunchOptions(settings=settings or {})
    services = None if replay else build_services(launch, need_model=False)
    if services is None or services.model is None:  # the recorded replay needs no model
        if headless:  # into the config's runtime (the sandboxed kernel by default) if settled
            from cave_tui.app.runtime_choice import config_runtime

            runtime = None if services is None else config_runtime(services.config)
            raise typer.Exit(asyncio.run(run_demo(speed=speed, runtime=runtime)))
        raise typer.Exit(open_replay(demo_session_path(), speed=speed, launch=launch))
    questions, injects = demo_plan()
    if headless:
        from cave_tui.app.runtime_choice import config_runtime

        runtime = config_runtime(services.config)
        raise typer.Exit(asyncio.run(run_live_demo(services.model, questions, runtime)))
    launch = replace(launch, data=DataOptions(inject=injects))
    raise typer.Exit(open_session(launch, services, tasks=questions))


@app.command()
def models(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of lines.")] = False,
) -> None:
    """List the local model servers that answer now (Ollama, llama.cpp, vLLM, LM Studio)."""
    import dataclasses
    import json

    from cave_tui.models.discovery import describe_found, discover

    servers = asyncio.run(discover())
    if as_json:
        typer.echo(json.dumps([dataclasses.asdict(s) for s in servers], indent=2))
    else:
        typer.echo("\n".join(describe_found(servers)))


@app.command("sessions")
def sessions_command(
    show_all: Annotated[
        bool, typer.Option("--all", help="List every session, not only the last 20.")
    ] = False,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON instead of lines.")] = False,
    sessions_dir: Annotated[
        Path | None, typer.Option("--sessions-dir", help="Where sessions are (./sessions).")
    ] = None,
) -> None:
    """List the recorded sessions, newest first: id, title, date, turns, variables, model and
    status, and how to resume one (`cave --resume ID`)."""
    from cave_tui.frontends.cli.sessions_command import list_sessions_command

    raise typer.Exit(list_sessions_command(sessions_dir, show_all=show_all, as_json=as_json))


@app.command("sandbox")
@setting_options(Command.SANDBOX)
def sandbox_command(
    show: Annotated[
        bool, typer.Option("--show/--check", help="Print the bwrap command line (default).")
    ] = True,
    settings: dict[str, SettingValue] | None = None,
) -> None:
    """Check that the kernel sandbox (bubblewrap) works here and show what a kernel may reach.

    Exit 0 when `--sandbox` can be used, 2 (with the reason) when it cannot.
    """
    from cave_tui.app.config import load_config
    from cave_tui.app.sandbox_report import sandbox_report

    config = load_config(settings)
    net = config.allow_net
    ok, text = sandbox_report(allow_net=net, show=show, mounts=config.mounts)
    typer.echo(text, err=not ok)
    raise typer.Exit(0 if ok else 2)


@app.command()
@setting_options(Command.REPLAY)
def replay(
    session: Annotated[str, typer.Argument(help="Session ID, path, or last.")],
    headless: Annotated[
        bool, typer.Option("--headless", help="Print the replay (no TUI).")
    ] = False,
    check: Annotated[
        bool,
        typer.Option("--check", help="Compare every output; on a difference exit 1 with a diff."),
    ] = False,
    speed: Annotated[float, typer.Option("--speed", help="Replay speed factor.")] = 1.0,
    sessions_dir: Annotated[
        Path | None, typer.Option("--sessions-dir", help="Where sessions are (./sessions).")
    ] = None,
    trust: Annotated[
        bool, typer.Option("--trust", help="Allow pickle/dill injections to load.")
    ] = False,
    settings: dict[str, SettingValue] | None = None,
) -> None:
    """Replay a recorded session: the recorded replies, the code run again live, in the
    runtime the session ran in (--kernel/--in-process, --sandbox/--no-sandbox override it)
    and in its working folder.

    In the app (the default) the session then goes on live; --headless prints it.
    """
    given = LaunchOptions(settings=settings or {})
    kernel, sandbox = given.get("kernel"), given.get("sandbox")
    if not isinstance(kernel, bool | None) or not isinstance(sandbox, bool | None):
        raise TypeError("--kernel and --sandbox are flags")
    if not headless and not check:
        from cave_tui.app.replay_runtime import replay_flags
        from cave_tui.session import SessionError, SessionStore, read_session

        try:
            folder = SessionStore(sessions_dir).resolve(session).absolute()
            meta = read_session(folder).meta
            replayed, notices = replay_flags(meta, kernel=kernel, sandbox=sandbox)
        except SessionError as exc:
            typer.echo(printable(f"cave: {exc}"), err=True)
            raise typer.Exit(2) from None
        for notice in notices:
            typer.echo(printable(f"cave: {notice}"), err=True)
        raise typer.Exit(
            open_replay(folder, speed=speed, trust=trust, launch=LaunchOptions(settings=replayed))
        )
    run = replay_command(
        session,
        headless=headless,
        check=check,
        speed=speed,
        sessions_dir=sessions_dir,
        trust=trust,
        kernel=kernel,
        sandbox=sandbox,
    )
    raise typer.Exit(asyncio.run(run))


def main() -> None:
    # Fast paths: --version without importing anything else; the app without typer's parsing.
    argv = sys.argv[1:]
    if argv == ["--version"]:
        sys.stdout.write(f"cave {__version__}\n")
        return
    argv = sys.argv[1:] = normalize_argv(argv)
    code = fast_protocol_command(argv)
    if code is not None:
        sys.exit(code)
    options = fast_app_flags(argv)
    if options is not None:
        try:
            services = build_services(options, need_model=False)
        except typer.BadParameter:
            app()  # let typer report it the usual way
            return
        sys.exit(open_session(options, services))
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
