"""The command line's data and session options, `cave run`'s one turn, and `cave replay`.

`@data_options` adds `--inject/--load/--dump/--trust/--resume/--sessions-dir` to any
typer command and hands them over as one `DataOptions`; `run_task` runs one recorded
turn (or one slash command) through the shared session lifecycle, also ending it on
SIGTERM/SIGHUP and after an unhandled error; `replay_command` is `cave replay` (main.py).
"""

from __future__ import annotations

import asyncio
import dataclasses
import functools
import inspect
import signal
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Annotated, Any, cast

import typer

from cave_tui.app.exits import CancelOnSignals
from cave_tui.app.services import AppServices
from cave_tui.app.startup import DataOptions, StartupError, abort_start, install
from cave_tui.frontends.cli.json_events import SessionLine, StatusLine, write_line
from cave_tui.printable import plain_text, printable

__all__ = ["DataOptions", "data_options", "normalize_argv", "replay_command", "run_task"]

EXIT_STARTUP = 2  # a pre-seed file could not be loaded, a session could not be resumed
EXIT_INTERRUPTED = 128 + signal.SIGINT  # Ctrl+C during the start-up


_OPTIONS: list[tuple[str, Any, Any]] = [
    (
        "inject",
        Annotated[
            list[str] | None,
            typer.Option(
                "--inject",
                help="Load PATH[:NAME][:encoding=ENC][:sep=SEP][:sheet=NAME] "
                "(or pkg:MODULE.ATTR[:NAME]) into the namespace; PATH[:NAME]:lazy[=dask] binds "
                "a lazy frame, :eager loads whole above lazy_above; repeatable.",
            ),
        ],
        None,
    ),
    (
        "load",
        Annotated[
            Path | None, typer.Option("--load", help="Restore a dump folder into the namespace.")
        ],
        None,
    ),
    (
        "dump",
        Annotated[
            Path | None,
            typer.Option("--dump", help="Dump every variable to DIR on exit (with manifest.json)."),
        ],
        None,
    ),
    (
        "trust",
        Annotated[
            bool,
            typer.Option("--trust", help="Allow loading pickle/dill files (they can run code)."),
        ],
        False,
    ),
    (
        "resume",
        Annotated[
            str | None,
            typer.Option("--resume", help="Resume a recorded session: an ID, or last."),
        ],
        None,
    ),
    (
        "sessions_dir",
        Annotated[
            Path | None,
            typer.Option("--sessions-dir", help="Where sessions are recorded (./sessions)."),
        ],
        None,
    ),
]


def data_options(fn: Callable[..., object]) -> Callable[..., object]:
    """Add the data/session options to a typer command; it receives them as `data=`."""
    names = [name for name, _, _ in _OPTIONS]
    base = inspect.signature(fn, eval_str=True)
    params = [p for p in base.parameters.values() if p.name != "data"]
    extra = [
        inspect.Parameter(name, inspect.Parameter.KEYWORD_ONLY, default=default, annotation=ann)
        for name, ann, default in _OPTIONS
    ]

    @functools.wraps(fn)
    def wrapper(*args: object, **kwargs: object) -> object:
        given = {name: kwargs.pop(name, None) for name in names}
        return fn(*args, data=_data_options(given), **kwargs)

    # inspect (and so typer) reads __signature__; typeshed does not declare it on functions.
    wrapper.__signature__ = base.replace(parameters=[*params, *extra])  # type: ignore[attr-defined]
    wrapper.__annotations__ = {
        **{k: v for k, v in fn.__annotations__.items() if k != "data"},
        **{name: ann for name, ann, _ in _OPTIONS},
    }
    return wrapper


def _data_options(given: Mapping[str, object]) -> DataOptions:
    """The options as typer parsed them (the types of `_OPTIONS`; None: not given)."""
    return DataOptions(
        inject=list(cast("list[str] | None", given["inject"]) or []),
        load=cast("Path | None", given["load"]),
        dump=cast("Path | None", given["dump"]),
        trust=bool(given["trust"]),
        resume=cast("str | None", given["resume"]),
        sessions_dir=cast("Path | None", given["sessions_dir"]),
    )


def normalize_argv(argv: list[str]) -> list[str]:
    """Let `--resume` stand alone (meaning `last`) at the end or before another option."""
    out: list[str] = []
    for i, arg in enumerate(argv):
        out.append(arg)
        if arg == "--resume" and (i + 1 == len(argv) or argv[i + 1].startswith("-")):
            out.append("last")
    return out


def _err(text: str) -> None:
    """A line on stderr; it may name files, variables or a kernel's error: printable only."""
    typer.echo(printable(text), err=True)


def _reporter(as_json: bool) -> Any:
    """`report(text, error=False)`: a line on stderr, or with --json an event on stdout.

    With --json every message is an `error` or `notice` event, so a program reading the
    events sees why a run failed without parsing stderr.
    """
    from cave_tui.agent import events as ev

    def report(text: str, *, error: bool = False, kind: str = "startup") -> None:
        if not as_json:
            _err(text)
            return
        text = text.removeprefix("cave: ")
        event = ev.ErrorEvent(content=text, kind=kind) if error else ev.NoticeEvent(content=text)
        write_line(event)

    return report


# -- cave run ------------------------------------------------------------------------------
def _exit_code(status: str) -> int:
    return {"completed": 0, "max_steps_reached": 1}.get(status, 2)


async def run_task(
    services: AppServices, task: str, as_json: bool, data: DataOptions, *, yes: bool = False
) -> int:
    """`_run_task`; with --json its last line is the run's `status` (outcome, exit code)."""
    ran: list[str] = []
    code = EXIT_INTERRUPTED
    try:
        code = await _run_task(services, task, as_json, data, ran, yes=yes)
    finally:
        if as_json:
            write_line(StatusLine.of(ran[-1] if ran else "error", code))
    return code


async def _run_task(
    services: AppServices,
    task: str,
    as_json: bool,
    data: DataOptions,
    ran: list[str],
    *,
    yes: bool = False,
) -> int:
    """One recorded turn of `cave run` through the shared session lifecycle; the exit code.

    Start-up, recording, the dump and closing the session are `app.startup`'s, as in the
    app; this adds what a one-shot run needs: SIGTERM/SIGHUP end the turn (exit 128+N), the
    same or Ctrl+C while the exit saves leave at once (`AppServices.leave_now`, exit 128+N),
    and messages go to stderr (or, with --json, to stdout as events). A task that starts
    with `/` is a slash command, run through `CliFrontEnd` (*yes* answers its questions);
    one that starts with `!` is the user's own cell (`AppServices.run_python`, no model).
    A slash command alone starts no session (it does no work to keep: it never becomes
    `last`); with `--resume` it acts on, and is recorded in, the resumed session.
    """
    report = _reporter(as_json)
    if task.lstrip().startswith("/"):
        data = dataclasses.replace(data, record=False)
    from cave_tui.app.console_progress import ConsoleProgress

    features = install(services, data, title=task, announce=False, resume_hint=False)
    progress = None if as_json else ConsoleProgress.on_stderr(services)  # a terminal only
    try:
        await services.start()
    except StartupError as exc:
        report(f"cave: cannot start: {exc}", error=True)
        await services.shutdown()
        return exc.exit_code
    except asyncio.CancelledError:  # Ctrl+C while the namespace was being pre-seeded
        interrupted = await abort_start(services)
        report(f"cave: {interrupted}", error=True, kind="interrupted")
        await services.shutdown()
        return EXIT_INTERRUPTED
    if progress is not None:
        progress.stop()  # the start's loads are done
    recorder = features.recorder
    if recorder is not None:
        recorder.on_warning = lambda text: report(f"cave: {text}")
    for text in services.notices:  # a resumed session's summary, skills skipped, …
        report(f"cave: {text}")
    services.notices.clear()
    if as_json and recorder is not None:
        write_line(SessionLine(recorder.id, str(Path(recorder.dir).absolute())))
    if not as_json:
        if recorder is not None:
            _err(f"session {recorder.id} ({recorder.dir})")
        banner = services.sandbox_banner
        if banner is not None:
            _err(banner)

    signals = CancelOnSignals(services.leave_now)
    received = signals.received
    status = "error"
    try:
        if task.lstrip().startswith("/"):
            status = await _run_command(services, task.strip(), as_json, yes)
        elif task.lstrip().startswith("!"):
            status = await _run_cell(services, task.lstrip()[1:].lstrip(), as_json)
        else:
            status = await _stream_turn(services, task, as_json)
    except asyncio.CancelledError:
        status = "terminated" if received else "cancelled"
    except Exception as exc:  # an unhandled error: dump and record it, then exit non-zero
        status = "crashed"
        report(f"cave: unhandled error: {type(exc).__name__}: {exc}", error=True, kind="crash")
        if recorder is not None:
            recorder.record_note(f"unhandled error: {type(exc).__name__}: {exc}")
    finally:
        signals.remove()
        services.note_exit(status)
        ran.append(status)
        await services.shutdown(leave_on_signals=True)  # Ctrl+C, SIGTERM again: leave now
        if progress is not None:
            progress.stop()  # the exit dump is written
        if services.left is not None:
            for line in services.exit_messages:
                report(line, error=True, kind="interrupted")
            services.exit_messages.clear()  # said
        elif features.dumped is not None:
            report(f"cave: dumped {features.dumped.summary()}")
        elif features.dump_error is not None:
            report(f"cave: {features.dump_failure()}", error=True, kind="dump")
        if services.left is None:
            for line in features.resume_lines(run=True):
                _err(line)  # stderr even with --json: stdout holds the events
    if services.left is not None:
        return int(services.left)
    if received:
        return 128 + received[0]
    return features.exit_code(_exit_code(status))


async def _run_command(services: AppServices, line: str, as_json: bool, yes: bool) -> str:
    """Run one slash command; "completed" when it did what it was asked, else "error"."""
    from cave_tui.app.commands import CommandContext, load_commands
    from cave_tui.frontends.cli.front_end import CliFrontEnd

    front_end = CliFrontEnd(services, as_json=as_json, yes=yes)
    ok = await load_commands().dispatch(line, CommandContext(services, front_end))
    await front_end.drain()
    return "completed" if ok and not front_end.failed else "error"


async def _run_cell(services: AppServices, code: str, as_json: bool) -> str:
    """Run the user's own cell *code* as the app's `!` lines run (recorded as a user cell,
    no model), shown as `cave run` shows a turn; "completed" unless the cell failed."""
    from cave_tui.agent import events as ev

    renderer = None
    if not as_json:
        from cave_tui.agent.display import RichDisplay

        renderer = RichDisplay()
    status = "completed"
    async for event in services.run_python(code):
        if as_json:
            write_line(event)
        elif renderer is not None:
            renderer.render(event)
        if isinstance(event, ev.ExecutionErrorEvent):
            status = "error"
    if renderer is not None:
        renderer.flush()
    return status


async def _stream_turn(services: AppServices, task: str, as_json: bool) -> str:
    from cave_tui.agent import AgentResponse, AgentStatus
    from cave_tui.agent import events as ev
    from cave_tui.models import Usage

    renderer = None
    if not as_json:
        from cave_tui.agent.display import RichDisplay

        renderer = RichDisplay()
    usage = Usage()
    content, steps = "", 0
    loop = asyncio.get_running_loop()
    started = loop.time()
    async for event in services.stream(task):
        if as_json:
            write_line(event)
        elif renderer is not None:
            renderer.render(event)
        steps = max(steps, event.step)
        if isinstance(event, ev.UsageEvent):
            usage = usage + Usage(event.prompt_tokens, event.completion_tokens, event.total_tokens)
        if isinstance(event, ev.FinalResponseEvent | ev.MaxStepsReachedEvent | ev.ErrorEvent):
            content = event.content
    recorder = services.session
    status = (recorder.turn_status if recorder is not None else None) or "error"
    if renderer is not None:
        renderer.close(
            AgentResponse(
                content=content,
                status=AgentStatus(status) if status in set(AgentStatus) else AgentStatus.ERROR,
                steps=steps,
                usage=usage,
                elapsed=loop.time() - started,
            )
        )
    return status


# -- cave replay ---------------------------------------------------------------------------
async def replay_command(
    session: str,
    *,
    headless: bool,
    check: bool,
    speed: float,
    sessions_dir: Path | None,
    trust: bool,
    kernel: bool | None = None,
    sandbox: bool | None = None,
) -> int:
    """Replay *session* printed (`--headless`/`--check`) in the runtime it ran in, in its
    working folder; *kernel*/*sandbox* (None: the session's) override the runtime."""
    from cave_tui.agent.display import RichDisplay
    from cave_tui.app.replay_runtime import ReplayRuntimeError, replay_runtime
    from cave_tui.dataio import DataIOError
    from cave_tui.runtime.kernel.errors import SandboxUnavailable
    from cave_tui.session import SessionError, SessionStore, read_session, replay_session

    try:
        folder = SessionStore(sessions_dir).resolve(session).absolute()  # before any chdir
        meta = read_session(folder).meta
    except SessionError as exc:
        _err(f"cave: {exc}")
        return EXIT_STARTUP
    try:
        runtime, notices = replay_runtime(meta, kernel=kernel, sandbox=sandbox)
    except (ReplayRuntimeError, SandboxUnavailable) as exc:
        _err(f"cave: cannot replay {folder.name}: {exc}")
        return EXIT_STARTUP
    except OSError as exc:
        _err(f"cave: cannot replay {folder.name} in its working folder: {exc.strerror or exc}")
        return EXIT_STARTUP
    for notice in notices:
        _err(f"cave: {notice}")
    _err(f"cave: replaying in {runtime.label}, in {Path.cwd()}")
    display = RichDisplay()
    pause = 0.0 if check else None
    try:
        result = await replay_session(
            folder, runtime=runtime, render=display.render, speed=speed, pause=pause, trust=trust
        )
    except (SessionError, DataIOError) as exc:
        _err(f"cave: cannot replay {folder}: {exc}")
        await runtime.stop()
        return EXIT_STARTUP
    try:
        display._flush_prose()
        display.console.print(plain_text(result.report()), highlight=False)
    finally:
        await result.runtime.stop()
    return 1 if check and not result.ok else 0
