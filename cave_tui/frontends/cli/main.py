"""The `cave` command line (typer).

`cave --version` is answered before typer or anything heavy is imported, and
every subcommand imports what it needs inside its body, so `--help` stays fast.
"""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Annotated, Any

import typer

from cave_tui import __version__
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
from cave_tui.printable import printable

app = typer.Typer(
    name="cave",
    help="A terminal workbench for an LLM agent that works on live Python objects.",
    add_completion=False,
    no_args_is_help=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)

# -- options shared by `cave`, `cave --plain` and `cave run` (add new ones here) --------------
# name -> (flags, help, type). Typer's declarations below and the fast path in `main()` both
# read this table; `APP_OPTIONS` lists the options of `cave` itself (the app and --plain).
OPTIONS: dict[str, tuple[tuple[str, ...], str, type]] = {
    "model": (
        ("--model", "-m"),
        "litellm model id, or scripted:FILE (a YAML list of replies).",
        str,
    ),
    "api_base": (("--api-base",), "Base URL of an OpenAI-compatible server.", str),
    "local_model": (
        ("--gguf",),
        "Serve this GGUF file (or hf:OWNER/REPO/FILE) with the embedded llama.cpp.",
        str,
    ),
    "kernel": (
        ("--kernel/--in-process", " /--no-kernel"),
        "Run code in an isolated Jupyter kernel (the default), or in this process.",
        bool,
    ),
    "memory_limit": (
        ("--memory-limit",),
        "The runtime's memory limit: auto (half of this machine's memory), off, or a size "
        "like 4G [auto].",
        str,
    ),
    "sandbox": (
        ("--sandbox/--no-sandbox",),
        "The kernel in a bubblewrap sandbox, writing only in the working folder: the default "
        "where it works (else a warning). --sandbox requires it (implies --kernel), "
        "--no-sandbox turns it off; `cave sandbox` shows it.",
        bool,
    ),
    "allow_net": (
        ("--allow-net/--no-allow-net",),
        "Let the kernel use the host's network (else its own: sandboxed, or on a root host).",
        bool,
    ),
    "mount": (
        ("--mount",),
        "Show the sandboxed kernel this host folder or file too, at the same path: "
        "read-write, or read-only with :ro; repeatable.",
        list,
    ),
    "workdir": (
        ("--workdir",),
        "Work in DIR as if cave were started there: cells run there, relative paths and "
        "./sessions resolve there [the current folder].",
        str,
    ),
    "policy": (("--policy",), "Security policy: trusted, standard or strict [standard].", str),
    "theme": (("--theme",), "Theme of the app (see /theme).", str),
    "skills": (("--skills",), "Also load Agent Skills from this directory.", str),
    "max_steps": (("--max-steps",), "Model calls allowed per turn [10].", int),
    "policies": (
        ("--policies",),
        "The agent's aids: guided, minimal, strict, off, or a spec like guided,-tips [guided].",
        str,
    ),
    "cell_timeout": (
        ("--cell-timeout",),
        "Stop a cell that runs longer than SECONDS (0: no limit) [300].",
        float,
    ),
    "first_token_timeout": (
        ("--first-token-timeout",),
        "Give up on a model that sends no reply within SECONDS of the request (0: no limit) [600].",
        float,
    ),
    "stream_idle_timeout": (
        ("--stream-idle-timeout",),
        "Give up on a model reply that stops for SECONDS mid-stream (0: no limit) [60].",
        float,
    ),
    "plain": (("--plain",), "Line-mode REPL (prompt_toolkit) instead of the app.", bool),
    # data and sessions, wired by cave_tui.app.startup
    "inject": (
        ("--inject",),
        "Load PATH[:NAME][:encoding=ENC][:sep=SEP][:sheet=NAME] (or pkg:MODULE.ATTR[:NAME]) "
        "into the namespace; repeatable.",
        list,
    ),
    "load": (("--load",), "Restore a dump folder into the namespace.", str),
    "dump": (("--dump",), "Dump every variable to DIR on exit (with manifest.json).", str),
    "trust": (("--trust",), "Allow loading pickle/dill files (they can run code).", bool),
    "resume": (("--resume",), "Resume a recorded session: an ID, or last.", str),
    "sessions_dir": (("--sessions-dir",), "Where sessions are recorded (./sessions).", str),
}
APP_OPTIONS = (
    "model",
    "api_base",
    "local_model",
    "kernel",
    "memory_limit",
    "sandbox",
    "allow_net",
    "mount",
    "workdir",
    "policy",
    "theme",
    "skills",
    "max_steps",
    "policies",
    "cell_timeout",
    "first_token_timeout",
    "stream_idle_timeout",
    "plain",
    "inject",
    "load",
    "dump",
    "trust",
    "resume",
    "sessions_dir",
)
LIST_METAVARS = {"inject": "PATH[:NAME]", "mount": "PATH[:ro]"}  # one value of a repeatable


def _opt(name: str) -> Any:
    flags, help_, kind = OPTIONS[name]
    if kind is list:  # repeatable: show what one value looks like, not list[str]
        return typer.Option(*flags, help=help_, metavar=LIST_METAVARS[name])
    return typer.Option(*flags, help=help_)


ModelOpt = Annotated[str | None, _opt("model")]
ApiBaseOpt = Annotated[str | None, _opt("api_base")]
GgufOpt = Annotated[str | None, _opt("local_model")]
PolicyOpt = Annotated[str | None, _opt("policy")]
KernelOpt = Annotated[bool | None, _opt("kernel")]
MemoryLimitOpt = Annotated[str | None, _opt("memory_limit")]
SandboxOpt = Annotated[bool | None, _opt("sandbox")]
AllowNetOpt = Annotated[bool | None, _opt("allow_net")]
MountOpt = Annotated[list[str] | None, _opt("mount")]
WorkdirOpt = Annotated[str | None, _opt("workdir")]
SkillsOpt = Annotated[str | None, _opt("skills")]
MaxStepsOpt = Annotated[int | None, _opt("max_steps")]
PoliciesOpt = Annotated[str | None, _opt("policies")]
CellTimeoutOpt = Annotated[float | None, _opt("cell_timeout")]
FirstTokenTimeoutOpt = Annotated[float | None, _opt("first_token_timeout")]
StreamIdleTimeoutOpt = Annotated[float | None, _opt("stream_idle_timeout")]
ThemeOpt = Annotated[str | None, _opt("theme")]
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


def fast_app_flags(argv: list[str]) -> dict[str, Any] | None:
    """Parse `cave [APP OPTIONS]` with argparse, or None to leave it to typer.

    Opening the app is the common case and typer's option coercion (pydantic
    adapters) costs ~0.15 s of start-up; anything else (a subcommand, --help, a
    mistake) returns None and typer handles it, with its usual messages.
    """
    import argparse

    if any(arg in ("-h", "--help", "--version") for arg in argv):
        return None
    parser = argparse.ArgumentParser(add_help=False, allow_abbrev=False, exit_on_error=False)
    for name in APP_OPTIONS:
        flags, _, kind = OPTIONS[name]
        if kind is bool:  # click's "--on/--off" declarations, either side possibly empty
            sides = [flag.partition("/") for flag in flags]
            positive = [on.strip() for on, _, _ in sides if on.strip()]
            negative = [off.strip() for _, _, off in sides if off.strip()]
            parser.add_argument(*positive, dest=name, action="store_true", default=None)
            if negative:
                parser.add_argument(*negative, dest=name, action="store_false")
        elif kind is list:
            parser.add_argument(*flags, dest=name, action="append", default=None)
        else:
            parser.add_argument(*flags, dest=name, type=kind, default=None)
    try:
        namespace, rest = parser.parse_known_args(argv)
    except (argparse.ArgumentError, SystemExit, ValueError):
        return None
    if rest:
        return None
    parsed = vars(namespace)
    parsed["plain"] = bool(parsed.get("plain"))
    parsed["trust"] = bool(parsed.get("trust"))
    return parsed


def _version_callback(value: bool) -> None:
    if value:
        typer.echo(f"cave {__version__}")
        raise typer.Exit()


@app.callback(invoke_without_command=True)
def root(
    ctx: typer.Context,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    local_model: GgufOpt = None,
    kernel: KernelOpt = None,
    memory_limit: MemoryLimitOpt = None,
    sandbox: SandboxOpt = None,
    allow_net: AllowNetOpt = None,
    mount: MountOpt = None,
    workdir: WorkdirOpt = None,
    policy: PolicyOpt = None,
    theme: ThemeOpt = None,
    skills: SkillsOpt = None,
    max_steps: MaxStepsOpt = None,
    policies: PoliciesOpt = None,
    cell_timeout: CellTimeoutOpt = None,
    first_token_timeout: FirstTokenTimeoutOpt = None,
    stream_idle_timeout: StreamIdleTimeoutOpt = None,
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

    Subcommands: run (one task), demo (no API key needed). Settings come from
    config.toml, then CAVE_* environment variables, then these flags.
    """
    if ctx.invoked_subcommand is not None:
        return
    flags = {
        "model": model,
        "api_base": api_base,
        "local_model": local_model,
        "kernel": kernel,
        "memory_limit": memory_limit,
        "sandbox": sandbox,
        "allow_net": allow_net,
        "mount": mount,
        "workdir": workdir,
        "policy": policy,
        "theme": theme,
        "skills": skills,
        "max_steps": max_steps,
        "policies": policies,
        "cell_timeout": cell_timeout,
        "first_token_timeout": first_token_timeout,
        "stream_idle_timeout": stream_idle_timeout,
        "plain": plain,
        "inject": inject,
        "load": load,
        "dump": dump,
        "trust": trust,
        "resume": resume,
        "sessions_dir": sessions_dir,
    }
    raise typer.Exit(open_session(flags))


@app.command()
@data_options
def run(
    task: Annotated[
        str,
        typer.Argument(
            help="The task for the agent, a slash command (/vars, /export …) or !CODE "
            "(your own Python, run as typed: no model)."
        ),
    ],
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    local_model: GgufOpt = None,
    policy: PolicyOpt = None,
    kernel: KernelOpt = None,
    memory_limit: MemoryLimitOpt = None,
    sandbox: SandboxOpt = None,
    allow_net: AllowNetOpt = None,
    mount: MountOpt = None,
    workdir: WorkdirOpt = None,
    skills: RunSkillsOpt = None,
    max_steps: MaxStepsOpt = None,
    policies: PoliciesOpt = None,
    cell_timeout: CellTimeoutOpt = None,
    first_token_timeout: FirstTokenTimeoutOpt = None,
    stream_idle_timeout: StreamIdleTimeoutOpt = None,
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
    flags = {
        "model": model,
        "api_base": api_base,
        "local_model": local_model,
        "policy": policy,
        "kernel": kernel,
        "memory_limit": memory_limit,
        "sandbox": sandbox,
        "allow_net": allow_net,
        "mount": mount,
        "workdir": workdir,
        "max_steps": max_steps,
        "policies": policies,
        "cell_timeout": cell_timeout,
        "first_token_timeout": first_token_timeout,
        "stream_idle_timeout": stream_idle_timeout,
    }
    own = task.lstrip().startswith(("/", "!"))  # a command or the user's own cell: no model
    services = build_services(flags, need_model=not own)
    services.skill_dirs = list(skills or [])
    options = data or DataOptions()
    raise typer.Exit(run_to_the_end(services, run_task(services, task, as_json, options, yes=yes)))


@app.command()
def demo(
    speed: Annotated[float, typer.Option("--speed", help="Replay speed factor.")] = 1.0,
    headless: Annotated[bool, typer.Option("--headless", help="Print the demo (no TUI).")] = False,
    replay: Annotated[
        bool, typer.Option("--replay", help="Replay the recorded model replies (no model).")
    ] = False,
    model: ModelOpt = None,
    api_base: ApiBaseOpt = None,
    sandbox: SandboxOpt = None,
) -> None:
    """The NYC flights analysis: asked live of the embedded (or --model) model, or replayed."""
    from cave_tui.app.demo import demo_plan, demo_session_path, run_demo, run_live_demo

    flags: dict[str, Any] = {"model": model, "api_base": api_base, "sandbox": sandbox}
    services = None if replay else build_services(flags, need_model=False)
    if services is None or services.model is None:  # the recorded replay needs no model
        if headless:  # into the config's runtime (the sandboxed kernel by default) if settled
            from cave_tui.app.services import config_runtime

            runtime = None if services is None else config_runtime(services.config)
            raise typer.Exit(asyncio.run(run_demo(speed=speed, runtime=runtime)))
        raise typer.Exit(open_replay(demo_session_path(), speed=speed, flags=flags))
    questions, injects = demo_plan()
    if headless:
        from cave_tui.app.services import config_runtime

        runtime = config_runtime(services.config)
        raise typer.Exit(asyncio.run(run_live_demo(services.model, questions, runtime)))
    raise typer.Exit(open_session({**flags, "inject": injects}, services, tasks=questions))


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


@app.command("sandbox")
def sandbox_command(
    show: Annotated[
        bool, typer.Option("--show/--check", help="Print the bwrap command line (default).")
    ] = True,
    allow_net: AllowNetOpt = None,
) -> None:
    """Check that the kernel sandbox (bubblewrap) works here and show what a kernel may reach.

    Exit 0 when `--sandbox` can be used, 2 (with the reason) when it cannot.
    """
    from cave_tui.app.config import load_config
    from cave_tui.app.sandbox_report import sandbox_report

    config = load_config()
    net = allow_net if allow_net is not None else config.allow_net
    ok, text = sandbox_report(allow_net=net, show=show, mounts=config.mounts)
    typer.echo(text, err=not ok)
    raise typer.Exit(0 if ok else 2)


@app.command()
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
    kernel: KernelOpt = None,
    sandbox: SandboxOpt = None,
) -> None:
    """Replay a recorded session: the recorded replies, the code run again live, in the
    runtime the session ran in (--kernel/--in-process, --sandbox/--no-sandbox override it)
    and in its working folder.

    In the app (the default) the session then goes on live; --headless prints it.
    """
    if not headless and not check:
        from cave_tui.app.replay_runtime import replay_flags
        from cave_tui.session import SessionError, SessionStore, read_session

        try:
            folder = SessionStore(sessions_dir).resolve(session).absolute()
            flags, notices = replay_flags(read_session(folder).meta, kernel=kernel, sandbox=sandbox)
        except SessionError as exc:
            typer.echo(printable(f"cave: {exc}"), err=True)
            raise typer.Exit(2) from None
        for notice in notices:
            typer.echo(printable(f"cave: {notice}"), err=True)
        raise typer.Exit(open_replay(folder, speed=speed, trust=trust, flags=flags))
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
    flags = fast_app_flags(argv)
    if flags is not None:
        if not flags.get("plain"):
            from cave_tui.frontends.tui.tty import hold_typed_input

            hold_typed_input()
        try:
            services = build_services(flags, need_model=False)
        except typer.BadParameter:
            app()  # let typer report it the usual way
            return
        sys.exit(open_session(flags, services))
    app()


if __name__ == "__main__":  # pragma: no cover
    main()
