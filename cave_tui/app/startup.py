"""The session lifecycle every front end shares (the app, `cave --plain`, `cave run`).

`install(services, data)` plugs the data and session pieces into `AppServices` as its
`SessionFeatures` (`services.use_session`), so a front end gets them without knowing about
them; the recording itself is held once, in `services.sessions` (`SessionState`):

- start-up (a ready hook): resume a session or start a new recording, then pre-seed the
  namespace (`--load`, then each `--inject`); a file that cannot be loaded raises
  `StartupError` naming it (the CLI exits 2);
- turns: `DataFeatures.stream` streams through `SessionRecorder.stream_events`, which
  records every event (as the agent's event sink) and snapshots after each step;
- the user's own `!` cells (an event hook): `SessionRecorder.record_user_cell` logs them
  in their place among the turns, and what they changed goes into the next snapshot;
- exit (an exit hook, run on /quit, Ctrl+Q, SIGTERM, SIGHUP and after an unhandled error):
  dump to `--dump DIR`, then close the recording with its status. A failed dump is
  reported, noted in the session and turns the exit code into `EXIT_DUMP_FAILED` (3).
  A second quit request meanwhile (a leave hook) closes the recording at once instead and
  says that the dump and the exit snapshot were not written.

Headless: no UI toolkit, no typer.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.current_model import prepare_local_model
from cave_tui.app.data_options import DataOptions

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.app.services import AppServices, ProgressHook
    from cave_tui.dataio.dump import DumpResult, LoadedDump
    from cave_tui.dataio.inject import Injection
    from cave_tui.dataio.progress import ProgressCallback
    from cave_tui.runtime.base import Runtime
    from cave_tui.session import SessionRecorder, SessionStore

DATA_FLAGS = ("inject", "load", "dump", "trust", "resume", "sessions_dir")
EXIT_DUMP_FAILED = 3  # the exit code when `--dump DIR` could not be written


class StartupError(Exception):
    """The namespace could not be pre-seeded or the session could not be resumed."""

    exit_code = 2


class DumpTargetError(StartupError):
    """`--dump DIR` names a folder no dump may write into: refused before the work."""

    exit_code = EXIT_DUMP_FAILED


class StartupInterrupted(StartupError):
    """Ctrl+C stopped the start-up (a long `--load`/`--inject`): nothing was started."""


async def abort_start(services: AppServices) -> StartupInterrupted:
    """Stop the start-up under way and say what it was doing (raise the result)."""
    await services.abort_start()
    features = services.features if isinstance(services.features, DataFeatures) else None
    if isinstance(features, DataFeatures):
        return StartupInterrupted(features.interrupted())
    return StartupInterrupted("interrupted while starting; nothing started")


def labelled(hook: ProgressHook, label: str) -> ProgressCallback:
    """A loader's progress callback that tells *hook* with *label* (the file or folder)."""
    return lambda progress: hook(progress, label)


async def preseed(
    runtime: Runtime,
    data: DataOptions,
    on_item: Callable[[str], None] | None = None,
    progress: ProgressHook | None = None,
    lazy_above: int | None = None,
    on_done: Callable[[Injection | LoadedDump], None] | None = None,
) -> list[Injection | LoadedDump]:
    """Apply `--load` then each `--inject`; returns what was loaded, in order, to record.
    A Parquet or CSV `--inject` above *lazy_above* bytes binds lazily (`inject_spec`).

    *on_item* is told each option (`--load DIR`, `--inject SPEC`) before it is loaded, and
    *on_done* each one loaded whole (so a cancelled pre-seed knows what it kept); the
    dump's and each injected file's reading report to *progress* (with the folder's or the
    file's name).
    Raises `DataIOError` naming the file that could not be loaded.
    """
    from cave_tui.dataio import inject_spec, load_dump, parse_inject_spec
    from cave_tui.dataio.errors import NameConflictError

    specs = [(spec, parse_inject_spec(spec)) for spec in data.inject]  # bad specs fail first
    tell = on_item or (lambda _: None)
    done: list[Injection | LoadedDump] = []

    def keep(result: Injection | LoadedDump) -> None:
        done.append(result)
        if on_done is not None:
            on_done(result)

    if data.load is not None:
        tell(f"--load {data.load}")
        report = labelled(progress, str(data.load)) if progress is not None else None
        keep(await load_dump(runtime, data.load, trust=data.trust, progress=report))
    for spec, parsed in specs:
        tell(f"--inject {spec}")
        try:
            report = (
                labelled(progress, Path(parsed.source).name)
                if progress is not None and not parsed.is_package
                else None
            )
            keep(
                await inject_spec(
                    runtime, parsed, trust=data.trust, progress=report, lazy_above=lazy_above
                )
            )
        except NameConflictError as exc:
            raise NameConflictError(
                f"--inject {spec}: {exc}; give another name with PATH:NAME",
                name=exc.name,
                kind=exc.kind,
            ) from None
    return done


def record_preseed(
    recorder: SessionRecorder, done: list[Injection | LoadedDump], *, trusted: bool = False
) -> None:
    """Log each pre-seed in the session: a dump's manifest hash (and whether its pickles
    were trusted), an injection's source."""
    from cave_tui.dataio.dump import MANIFEST, LoadedDump
    from cave_tui.dataio.load import file_sha256

    for result in done:
        if isinstance(result, LoadedDump):
            sha256 = file_sha256(result.directory / MANIFEST)
            recorder.record_load(result, sha256, trusted=trusted)
        else:
            recorder.record_injection(result)


def needs_runtime_first(data: DataOptions) -> bool:
    """True when the runtime must be up before the front end opens (to fail early)."""
    return bool(data.inject or data.load or data.resume)


class DataFeatures:
    """The session recorder and data options of one front-end session."""

    def __init__(
        self,
        services: AppServices,
        data: DataOptions,
        *,
        title: str = "",
        label: str = "cave",
        announce: bool = True,
        resume_hint: bool = True,
    ) -> None:
        self.services = services
        self.resume_hint = resume_hint  # the exit says how to resume (`resume_lines`)
        self.data = data
        self.title = title  # the first request when known (`cave run TASK`), else ""
        self.label = label  # names the folder of a session without a title yet
        self.announce = announce  # say "Recording session …" among the start-up notices
        self.dumped: DumpResult | None = None  # the exit dump's outcome
        self.dump_error: str | None = None
        self.messages: list[str] = []  # shown by the front end once it is up
        self.status = "closed"
        self.failed = False  # the start failed: nothing to dump
        self.stage = "starting the runtime"  # what the start-up is doing (said if interrupted)
        # The start-up's loads (--resume, --load, --inject) while they run, what they loaded
        # whole so far, and whether the user cancelled them (`cancel_loads`).
        self._loading: asyncio.Task[list[Injection | LoadedDump]] | None = None
        self._loaded: list[Injection | LoadedDump] = []
        self._resumed_names: set[str] | None = None
        self._cancel_asked = False

    @property
    def recorder(self) -> SessionRecorder | None:
        """The recording (`services.sessions.recorder`: held there only)."""
        return self.services.sessions.recorder

    @recorder.setter
    def recorder(self, recorder: SessionRecorder | None) -> None:
        self.services.sessions.recorder = recorder

    def interrupted(self) -> str:
        """What to tell the user when Ctrl+C stops the start-up."""
        return (
            f"interrupted while {self.stage}; nothing started "
            "(no session was recorded, nothing was dumped)"
        )

    # -- start-up ------------------------------------------------------------------------
    async def on_ready(self) -> None:
        services = self.services
        from cave_tui.app.live_objects import explain_data_error
        from cave_tui.dataio import DataIOError
        from cave_tui.dataio.dump import LoadedDump, check_dump_target
        from cave_tui.session import SessionError, SessionRecorder, SessionStore

        if self.recorder is not None:
            return
        runtime = services.live_runtime
        store = SessionStore(self.data.sessions_dir)
        services.sessions.sessions_dir = store.root
        if self.data.dump is not None:  # fail now, not after the work, on a bad target
            try:
                check_dump_target(self.data.dump.expanduser().absolute(), sessions=store.root)
            except DataIOError as exc:
                self.failed = True
                raise DumpTargetError(f"--dump: {exc}") from None
        before = set(await runtime.names())
        loading = asyncio.ensure_future(self._load(runtime, store))
        self._loading = loading
        sessions = services.sessions  # `_load` sets its recorder when it resumes one
        try:
            done = await loading
        except (DataIOError, SessionError) as exc:
            self.failed = True
            if sessions.recorder is not None:
                await sessions.recorder.close("startup_failed")
            message = explain_data_error(exc) if isinstance(exc, DataIOError) else str(exc)
            raise StartupError(message) from None
        except asyncio.CancelledError:
            current = asyncio.current_task()
            if not self._cancel_asked or (current is not None and current.cancelling()):
                # Ctrl+C stopped the whole start: a resumed session is left as it was
                self.failed = True
                if sessions.recorder is not None:
                    sessions.recorder.close_now("startup_failed")
                raise
            done = await self._after_cancel(runtime, before)
        finally:
            self._loading = None
        for result in done:
            verb = "Loaded" if isinstance(result, LoadedDump) else "Injected"
            self.messages.append(f"{verb} {result.summary()}")
        if sessions.recorder is None and not self.data.record:  # e.g. `cave run "/cmd"`
            services.notices.extend(self.messages)
            return
        if self.recorder is None:
            self.recorder = SessionRecorder.create(
                store.root,
                title=self.title,
                label=self.label,
                agent=services.agent,
                runtime=runtime,
            )
        self.recorder.on_warning = lambda text: services.notices.append(text)
        record_preseed(self.recorder, done, trusted=self.data.trust)
        if self.announce:
            self.messages.append(f"Recording session {self.recorder.id} ({self.recorder.dir}).")
        services.notices.extend(self.messages)
        prepare_local_model(services.model, self.recorder.dir)  # unless named for later

    async def _load(self, runtime: Runtime, store: SessionStore) -> list[Injection | LoadedDump]:
        """The start-up's loads: the session to resume, then `--load` and each `--inject`."""
        from cave_tui.session import SessionError, resume_session

        services = self.services
        if self.data.resume:
            self.stage = f"resuming the session {self.data.resume}"
            agent = await services.agent_ready()  # built by now, unless in the background
            if agent is None:
                raise SessionError("--resume needs a model: pass --model (or set CAVE_MODEL)")
            folder = store.resolve(self.data.resume)
            resumed = await resume_session(
                folder,
                agent,
                trust=self.data.trust,
                progress=labelled(services.report_progress, folder.name),
            )
            self.recorder = resumed.recorder
            services.transcript.extend(resumed.transcript)
            self.messages.append(resumed.summary())
            self._resumed_names = set(await runtime.names())
        from cave_tui.dataio.inject import lazy_threshold

        return await preseed(
            runtime,
            self.data,
            self._loading_item,
            services.report_progress,
            lazy_above=lazy_threshold(services.config.lazy_above, runtime.memory_limit),
            on_done=self._loaded.append,
        )

    def cancel_loads(self) -> bool:
        """Cancel the start-up's loads (Esc, Ctrl+C in the app); False when none runs. What
        was loaded whole stays, the load under way binds nothing, the start goes on."""
        loading = self._loading
        if loading is None or loading.done():
            return False
        self._cancel_asked = True
        loading.cancel()
        return True

    async def _after_cancel(
        self, runtime: Runtime, before: set[str]
    ) -> list[Injection | LoadedDump]:
        """The loads were cancelled: unbind what the load under way bound, and say which
        options were not loaded. Returns what was loaded whole, to record."""
        from cave_tui.dataio.dump import LoadedDump

        done = list(self._loaded)
        keep = set(before) | (self._resumed_names or set())
        for result in done:
            keep |= set(result.names) if isinstance(result, LoadedDump) else {result.name}
        for name in await runtime.names():
            if name not in keep:
                with contextlib.suppress(KeyError):
                    await runtime.delete(name)
        options = [f"--load {self.data.load}"] if self.data.load is not None else []
        options += [f"--inject {spec}" for spec in self.data.inject]
        missed = options[len(done) :]
        if self.data.resume and self._resumed_names is None:
            missed.insert(0, f"--resume {self.data.resume}")
        self.messages.append(f"Cancelled: not loaded: {', '.join(missed)}.")
        return done

    def _loading_item(self, option: str) -> None:
        self.stage = f"loading {option}"

    # -- turns ---------------------------------------------------------------------------
    def stream(self, task: str) -> AsyncIterator[ev.Event]:
        """The turn's events through the recorder (attached to the agent when it appears)."""
        recorder = self.recorder
        agent = self.services.agent
        assert agent is not None  # `AppServices.stream` asks only once there is one
        if recorder is None or recorder.closed:
            return agent.stream_events(task)
        if recorder.agent is not agent:
            if recorder.agent is not None:
                recorder.detach()
            recorder.attach(agent, self.services.runtime)
        return recorder.stream_events(task)

    def on_event(self, event: ev.Event) -> None:
        """The user's own `!` cells are recorded (and what they changed is snapshotted)."""
        from cave_tui.agent.events import USER_AGENT

        recorder = self.recorder
        if recorder is not None and event.agent == USER_AGENT:
            recorder.record_user_cell(event)

    # -- exit ------------------------------------------------------------------------------
    @property
    def dump_pending(self) -> bool:
        """`--dump DIR` is set and has not been written yet."""
        return self.data.dump is not None and self.dumped is None

    async def dump_now(self) -> bool:
        """Write the `--dump` folder now; False (with `dump_error` and a session note) when
        it failed. Nothing to dump (no target, the start failed) counts as done."""
        from cave_tui.dataio import DataIOError, dump_namespace

        runtime = self.services.runtime
        target = self.data.dump
        if target is None or runtime is None or not self.services.ready or self.failed:
            return True
        try:
            sessions = self.services.sessions_dir
            report = labelled(self.services.report_progress, str(target))
            self.dumped = await dump_namespace(runtime, target, sessions=sessions, progress=report)
        except DataIOError as exc:
            self.dump_error = str(exc)
            recorder = self.recorder
            if recorder is not None:
                recorder.record_note(f"dump failed: {exc}")
            return False
        self.dump_error = None
        return True

    def dump_failure(self) -> str:
        """What to tell the user when the dump failed: why, and where the data still is."""
        text = f"dump failed: {self.dump_error}"
        recorder = self.recorder
        if recorder is not None:
            text += (
                f". Nothing is lost: session {recorder.id} keeps the namespace "
                f"(cave --resume {recorder.id})"
            )
        return text

    def exit_code(self, code: int) -> int:
        """*code*, or `EXIT_DUMP_FAILED` in place of a success (0) or of max steps (1)
        when the dump failed."""
        return EXIT_DUMP_FAILED if self.dump_error is not None and code in (0, 1) else code

    async def on_exit(self) -> None:
        status = self.services.exit_status or self.status
        recorder = self.recorder
        try:
            if self.dump_pending:
                try:
                    await self.dump_now()
                except asyncio.CancelledError:
                    if self.services.left is not None:
                        raise
                    self.dump_error = "not written: the work it waited on was cancelled"
            if self.dumped is not None:
                self.services.exit_messages.append(f"cave: dumped {self.dumped.summary()}")
            elif self.dump_error is not None:
                self.services.exit_messages.append(f"cave: {self.dump_failure()}")
            if recorder is not None:
                await recorder.close(status)
        finally:  # however the above ended, the session record is closed
            if recorder is not None and not recorder.closed:
                recorder.record_note("the exit snapshot was not taken: it was cancelled")
                recorder.close_now(status)
        if self.resume_hint:
            self.services.exit_messages.extend(self.resume_lines())

    def resume_lines(self, *, run: bool = False) -> list[str]:
        """The exact command lines that resume the recorded session (with *run*, also
        `cave run`'s), said at exit; none when nothing was recorded or the start failed."""
        from cave_tui.session.resume_line import resume_command

        recorder = self.recorder
        if recorder is None or self.failed:
            return []
        root = recorder.dir.parent.absolute()
        moved = self.services.config.workdir is not None or root != Path.cwd() / "sessions"
        where = root if moved else None
        lines = [f"cave: resume this session with: {resume_command(recorder.id, where)}"]
        if run:
            again = resume_command(recorder.id, where, run=True)
            lines.append(f"cave: or go on with one more task: {again}")
        return lines

    def leave_now(self, reason: str) -> None:
        """The exit was cut short (`AppServices.leave_now`): close the session record now,
        with no exit snapshot, and say what was not written and why."""
        status = self.services.exit_status or self.status
        recorder = self.recorder
        dump = self.data.dump if self.dump_pending and not self.failed else None
        unwritten = f"the dump to {dump} was not written" if dump is not None else ""
        if recorder is not None and not recorder.closed:
            kept = f"session {recorder.id} keeps the namespace as of its last snapshot"
            what = "the exit snapshot was not taken"
            what = f"{unwritten} and {what}" if dump is not None else what
            recorder.record_note(f"left at once: {reason}; {what}")
            recorder.close_now(status)
            text = f"cave: left at once ({reason}): {what}; {kept} (cave --resume {recorder.id})"
        elif dump is not None:
            text = f"cave: left at once ({reason}): {unwritten}"
        else:
            return
        if dump is not None:
            self.dump_error = f"not written: {reason}"
        self.services.exit_messages.append(text)


def install(
    services: AppServices,
    data: DataOptions,
    *,
    title: str = "",
    label: str = "cave",
    announce: bool = True,
    resume_hint: bool = True,
) -> DataFeatures:
    """Wire data and session features into *services* (see the module docstring). *title*:
    the session's first request when known; else its first request, cell or command names
    it. *label* names the folder of a session without a title. *resume_hint*: the exit says
    how to resume the session (`DataFeatures.resume_lines`)."""
    features = DataFeatures(
        services, data, title=title, label=label, announce=announce, resume_hint=resume_hint
    )
    services.use_session(features)
    return features
