"""`CaveApp`: the Textual front end.

Over 400 lines because it is the wiring of the whole screen: one handler per message and
per key action, and `TuiFrontEnd` (what commands ask of the app), which calls into it.
What has a concern of its own lives beside it: widgets/, screens/, keys.py (key order),
messages.py (what workers post).

Data flows one way. The app sends requests to the core (a task, a command, a line
of Python) and renders the events the core streams back. Turns run in an async
worker over `AppServices.stream`; the worker never touches a widget, it posts an
`AgentEvent` message per event and the app renders it on its own message loop
(Harlequin's pattern). Cancelling that worker (Esc, Ctrl+C) cancels the turn: the
core interrupts a running cell on cancellation and keeps the partial reply.

Extension points for other features (see docs/tui.md):
- `services.event_hooks`: every event, in order (session recording);
- `services.exit_hooks`: run once on /quit, Ctrl+Q, SIGTERM, SIGHUP (dump on exit);
- `TuiFrontEnd`: what commands ask of the app (`CommandContext.ui`), one method each;
- `render_event(event)`: draw any event as if it were streamed live.
"""

from __future__ import annotations

import asyncio
import os
import signal
import threading
import time
from collections.abc import AsyncIterable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar, cast

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical
from textual.reactive import var
from textual.worker import Worker

from cave_tui.app.commands import CommandContext, load_commands, registry
from cave_tui.app.commands.registry import Severity
from cave_tui.app.config import history_path, save_setting
from cave_tui.app.history import InputHistory
from cave_tui.app.services import NO_MODEL_HELP, AppServices
from cave_tui.frontends.tui.keys import is_text, move_focus
from cave_tui.frontends.tui.messages import (
    AgentEvent,
    ChatNotice,
    CostEstimate,
    LoadProgress,
    NamespaceChanged,
    NamespaceRows,
    ReplayFinished,
    ServicesReady,
    StartFailed,
    TurnFinished,
)
from cave_tui.frontends.tui.screens.base import ANSWER_GRACE, CaveModal, KeyRoute
from cave_tui.frontends.tui.themes import BUNDLED, load_themes
from cave_tui.frontends.tui.widgets.chat import ChatPane
from cave_tui.frontends.tui.widgets.inspector import Inspector, VarTable
from cave_tui.frontends.tui.widgets.keybar import KeyBar
from cave_tui.frontends.tui.widgets.prompt import PromptArea, PromptInput
from cave_tui.frontends.tui.widgets.status import StatusLine
from cave_tui.frontends.tui.widgets.steplog import StepLog, format_duration
from cave_tui.models.base import Usage
from cave_tui.printable import printable

if TYPE_CHECKING:
    from textual.screen import Screen
    from textual.widget import Widget

    from cave_tui.agent import events as ev
    from cave_tui.agent.approval import ApprovalRequest
    from cave_tui.dataio.progress import Progress

ScreenResult = TypeVar("ScreenResult")  # what a modal screen gives back
# The agent package is imported lazily: the app renders events by their type value.
DOUBLE_PRESS_SECONDS = 2.0
LEAVE_AFTER_SIGNAL = 10.0  # seconds a signalled app may take to restore the terminal
MEMORY_REFRESH = 2.0  # seconds between updates of the runtime's memory in the status line
STARTUP_DELAY = 0.3  # idle time before the runtime is built (typing pushes it back)


def _slash_commands() -> Any:
    from cave_tui.frontends.tui.palette import (
        SlashCommands,  # textual.command loads with the palette
    )

    return SlashCommands


FALLBACK_THEME = "cave-dark"


class TuiFrontEnd:
    """`FrontEnd` for the app: what commands ask of it, one method per action.

    `print` and `progress` may be called from any thread (a loader reports progress from its
    worker thread): off the app's thread they only post a message.
    """

    def __init__(self, app: CaveApp) -> None:
        self.app = app

    def print(self, text: str, *, style: str = "") -> None:
        if self.app.in_app_thread:
            self.app.chat.add_notice(text, style or "info")
        else:
            self.app.post_message(ChatNotice(text, style or "info"))

    async def confirm(self, question: str) -> bool:
        from cave_tui.frontends.tui.screens.confirm import ConfirmScreen

        answer = await self.app.ask_screen(ConfirmScreen(question))
        return answer is True

    def progress(self, progress: Progress, label: str) -> None:
        self.app.post_message(LoadProgress(progress, label))

    def theme_names(self) -> list[str]:
        return sorted(self.app.available_themes)

    def current_theme(self) -> str:
        return self.app.theme

    def quit(self) -> None:
        self.app.call_later(self.app.action_request_quit)

    def clear(self) -> None:
        self.app.action_clear()

    def set_theme(self, name: str) -> None:
        self.app.set_theme(name)

    def insert(self, text: str, *, replace: bool = False) -> None:
        if replace:
            self.app.prompt.set_text(text)
            self.app.prompt.focus()
        else:
            self.app.prompt.insert_text(text)

    def refresh_status(self) -> None:
        self.app.update_status()

    def show(self, name: str) -> None:
        self.app.open_detail(name)

    def render(self, event: ev.Event) -> None:
        self.app.render_event(event)

    def replay_events(self, events: AsyncIterable[ev.Event]) -> None:
        self.app.replay(events)

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        self.app.replay_session(folder, speed=speed, trust=trust)

    def session_loaded(self, transcript: list[ev.Event]) -> None:
        # The inspector follows the runtime's own change reports.
        self.app.action_clear()
        self.app.draw_transcript(transcript)
        self.app.update_status()

    def notify(self, message: str, severity: Severity = "information") -> None:
        self.app.notify(printable(message), severity=severity, markup=False)  # names, errors


class CaveApp(App[None]):
    """Chat, code/output log, live namespace inspector, one input."""

    CSS_PATH = "app.tcss"
    TITLE = "cave"
    COMMANDS = App.COMMANDS | {_slash_commands}
    HORIZONTAL_BREAKPOINTS = [(0, "-narrow"), (110, "-wide")]
    BINDINGS = [
        Binding("ctrl+c", "interrupt", "Interrupt", priority=True, id="cave.interrupt"),
        Binding("ctrl+c", "quit_twice", "Quit", show=False, priority=True, id="cave.quit_twice"),
        Binding("escape", "cancel_turn", "Cancel turn", id="cave.cancel"),
        Binding("ctrl+q", "request_quit", "Quit", priority=True, id="cave.quit"),
        Binding("f1", "help", "Help", id="cave.help"),
        Binding("f2", "inspector", "Inspector", id="cave.inspector"),
        Binding("ctrl+l", "clear", "Clear", show=False, id="cave.clear"),
        Binding("ctrl+o", "unfold", "Unfold output", show=False, id="cave.unfold"),
    ]

    busy = var(False, bindings=True)

    def __init__(
        self,
        services: AppServices,
        *,
        clock: Callable[[], float] | None = None,
        animate: bool = True,
        history_file: Path | bool | None = True,
        persist_settings: bool = True,
        start_delay: float = STARTUP_DELAY,
        answer_grace: float = ANSWER_GRACE,
    ) -> None:
        super().__init__()
        load_commands()
        self.services = services
        self.config = services.config
        self.clock = clock or time.monotonic
        self.animate_ui = animate
        if not animate:
            self.animation_level = "none"
        self.persist_settings = persist_settings
        self.start_delay = start_delay
        self.answer_grace = answer_grace  # a dialog's quiet time before an answer key counts
        path = history_path() if history_file is True else (history_file or None)
        self.history = InputHistory(path)
        self.front_end = TuiFrontEnd(self)
        self.ctx = CommandContext(services, self.front_end)
        self.usage = Usage()
        self._last_ctrl_c = -1e9
        self._early_input: list[events.Event] | None = []  # None once the input has the focus
        self._queued: list[str] = []  # lines sent while a turn ran: they run next, in order
        self._last_command: Any = None  # the worker of the latest /command (they run in order)
        self._quitting = False
        self._quit_task: asyncio.Future[None] | None = None
        self._forced_quit = False  # a signal: leave whatever happens
        self._dump_warned = False  # a failed --dump was shown; the next quit leaves
        self._theme_notices: list[str] = []
        self._memory_timer: Any = None  # refreshes the runtime's memory in the status line
        # (session folder, speed, trust) replayed once the runtime is up (`cave demo`)
        self.startup_replay: tuple[Path, float, bool] | None = None
        self.startup_tasks: list[str] = []  # asked in order once the runtime is up (cave demo)
        self._register_themes()
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        services.use_approver(self._approve)
        # Every namespace change reaches the inspector from the runtime itself.
        services.namespace_hooks.append(lambda change: self.post_message(NamespaceChanged(change)))
        self._inspector_loading = False
        self._inspector_dirty = False
        self._inspector_changed: set[str] = set()

    # -- setup ---------------------------------------------------------------------------------
    def _register_themes(self) -> None:
        from cave_tui.app.config import config_dir

        themes, problems = load_themes(BUNDLED, config_dir() / "themes")
        self._theme_notices = problems
        for theme in themes:
            self.register_theme(theme)
        wanted = self.config.theme
        if wanted in self.available_themes:
            self.theme = wanted
        else:
            self._theme_notices.append(f"unknown theme {wanted!r}; using {FALLBACK_THEME}")
            self.theme = FALLBACK_THEME

    def compose(self) -> ComposeResult:
        # References are kept: `query_one` would search a modal screen when one is open.
        self.chat = ChatPane(id="chat")
        self.steplog = StepLog(id="log")
        self.inspector = Inspector(id="inspector")
        prompt_area = PromptArea(history=self.history, completer=registry.complete)
        self.prompt: PromptInput = prompt_area.input
        self.status = StatusLine(id="status", clock=self.clock, animate=self.animate_ui)
        if self.busy:
            self.status.busy = True
        with Horizontal(id="main"):
            with Vertical(id="work"):
                yield self.chat
                yield self.steplog
            yield self.inspector
        yield prompt_area
        yield self.status
        yield KeyBar(id="keys")

    def _fit_layout(self) -> None:
        """Choose the layout from the terminal's size now, before the first paint: Textual
        sets the breakpoint classes when the screen handles its Resize, which a busy start
        (an `--inject` load) could delay long after the wide layout was drawn."""
        width = self.size.width
        fitting = [name for minimum, name in self.HORIZONTAL_BREAKPOINTS if width >= minimum]
        self.screen.update_classes(
            {name: name == fitting[-1] for _, name in self.HORIZONTAL_BREAKPOINTS}, animate=False
        )

    async def on_event(self, event: events.Event) -> None:
        # Keys typed while the app starts (before the input has the focus) are held, then
        # given to the input in order: else they went to the bare screen and were lost.
        if isinstance(event, events.Key | events.Paste) and self._early_input is not None:
            self._early_input.append(event)
            return
        if isinstance(event, events.Key | events.Paste) and not event.is_forwarded:
            await self._route_key(event)
            return
        await super().on_event(event)

    async def _route_key(self, event: events.Key | events.Paste) -> None:
        """A dialog never takes keys meant for the input (screens/base.py: the key rule);
        text typed where nothing has the focus goes to the input (else it was lost)."""
        screen = self._screen_stack[-1] if self._screen_stack else None
        if isinstance(screen, CaveModal):
            route = screen.route(event, self.answer_grace)
            if route is KeyRoute.INPUT:
                self.prompt.post_message(PromptInput.Typed(screen.typed(event)))
                return
            if route is KeyRoute.DROP:
                return
        elif screen is self.prompt.screen and screen.focused is None and is_text(event):
            move_focus(self.prompt)
        await super().on_event(event)

    def take_typing(self, widget: Widget, event: events.Key | events.Paste) -> bool:
        """Text typed in a pane (the chat, the log, the inspector's table) goes to the input,
        which takes the focus now, so the keys queued after it follow it (`keys.TypingOwner`)."""
        prompt = self.prompt
        if widget.screen is not prompt.screen:
            return False
        forwarded: events.Key | events.Paste = (
            events.Paste(event.text)
            if isinstance(event, events.Paste)
            else events.Key(event.key, event.character)
        )
        forwarded._set_forwarded()  # if it bubbles back up, the app must not route it again
        move_focus(prompt)
        prompt.post_message(forwarded)
        return True

    def on_mount(self) -> None:
        self._fit_layout()
        prompt = self.prompt
        prompt.cursor_blink = self.animate_ui
        self.screen.set_focus(prompt)
        early, self._early_input = self._early_input or [], None
        for event in early:
            if isinstance(event, events.Key) and event.key == "ctrl+j":
                # Typed before the terminal left cooked mode, Enter arrives as "\n" (ICRNL).
                event = events.Key("enter", "\r")
            prompt.post_message(event)
        self.chat.dark = self.current_theme.dark
        self.theme_changed_signal.subscribe(self, self._theme_changed)
        self.update_status()
        for notice in [*self.services.notices, *self._theme_notices]:
            self.chat.add_notice(notice, "warning")
        self.services.notices.clear()
        if self.services.model is None and self.startup_replay is None:
            self.chat.add_notice(NO_MODEL_HELP, "warning")
        self._install_signal_handlers()
        # Build the runtime (IPython import) only once the first frame is on screen and the
        # input takes keys: its import competes for the GIL with the first paint.
        self._start_timer: Any = None
        if self.start_delay > 0:
            self._start_timer = self.set_timer(self.start_delay, self._start_when_idle)
        else:
            self.start_services()

    def _start_when_idle(self) -> None:
        self._start_timer = None
        self.start_services()

    def _install_signal_handlers(self) -> None:
        loop = asyncio.get_running_loop()
        self._signals: list[int] = []
        for name in ("SIGTERM", "SIGHUP"):
            sig = getattr(signal, name, None)
            if sig is None:
                continue
            try:
                loop.add_signal_handler(sig, self._on_signal, sig)
                self._signals.append(sig)
            except (NotImplementedError, RuntimeError, ValueError):
                pass

    def _on_signal(self, sig: int) -> None:
        self.services.note_exit("terminated")
        self._forced_quit = True
        if self._quitting:  # signalled again while saving before exit: leave now
            name = signal.Signals(sig).name
            self._leave_now(f"cave got {name} while it was saving before exit", 128 + sig)
            return
        self._signal_task = asyncio.ensure_future(self._quit_on_signal(sig))

    async def _quit_on_signal(self, sig: int) -> None:
        """The exit path, then leave even if the terminal cannot be restored: after SIGHUP
        the terminal is gone and Textual's last writes to it would block for ever."""
        await self.action_quit()
        if self._quit_task is not None:
            await self._quit_task
        code = 128 + sig
        if sig == getattr(signal, "SIGHUP", None):
            os._exit(code)  # the exit hooks ran (session closed, dump written)
        # Any other signal: Textual restores the terminal; a wedged one cannot keep us.
        timer = threading.Timer(LEAVE_AFTER_SIGNAL, os._exit, args=(code,))
        timer.daemon = True
        timer.start()

    def on_unmount(self) -> None:
        try:
            loop = asyncio.get_running_loop()
        except RuntimeError:
            return
        for sig in getattr(self, "_signals", []):
            loop.remove_signal_handler(sig)

    @work(group="startup", exit_on_error=False)
    async def start_services(self) -> None:
        try:
            await self.services.start()
        except Exception as exc:
            self.post_message(StartFailed(f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(ServicesReady())

    @property
    def in_app_thread(self) -> bool:
        """True on the thread that runs the app's event loop (where widgets may be touched)."""
        return threading.get_ident() == self._thread_id

    def on_chat_notice(self, message: ChatNotice) -> None:
        self.chat.add_notice(message.text, message.style)

    def on_load_progress(self, message: LoadProgress) -> None:
        from cave_tui.app.commands.data import progress_line

        p = message.progress
        self.chat.show_progress(p.path or message.label, progress_line(p, message.label))

    def on_start_failed(self, message: StartFailed) -> None:
        self.chat.add_notice(f"The runtime could not start: {message.error}", "error")

    def on_services_ready(self, message: ServicesReady) -> None:
        self.draw_transcript(self.services.transcript)
        self.services.transcript.clear()
        self.chat.add_notice(self.services.boundary_notice, "dim")
        for notice in self.services.notices:
            self.chat.add_notice(notice, "warning")
        self.services.notices.clear()
        self.update_status()
        if self._memory_timer is None:  # the runtime's memory in the status line, kept current
            self._memory_timer = self.set_interval(MEMORY_REFRESH, self.update_status)
        self.refresh_inspector()
        if self.startup_replay is not None:
            folder, speed, trust = self.startup_replay
            self.startup_replay = None
            self.replay_session(folder, speed=speed, trust=trust)
        elif self.startup_tasks and self.services.model is not None:
            first, *rest = self.startup_tasks
            self.startup_tasks = []
            self._queued.extend(rest)
            self.status.queued = len(self._queued)
            self._run_line(first, queued=True)

    # -- status --------------------------------------------------------------------------------
    def update_status(self) -> None:
        status, services = self.status, self.services
        status.model = services.model_label
        status.runtime = services.runtime_label if services.ready else "starting…"
        status.memory = services.runtime_memory
        status.policy = self.config.policy
        status.approve = self.config.approve
        status.tokens_in = self.usage.prompt_tokens
        status.tokens_out = self.usage.completion_tokens

    def watch_busy(self, busy: bool) -> None:
        # The status line is made by compose(), which then shows a busy state set before it.
        status: StatusLine | None = getattr(self, "status", None)
        if status is not None:
            status.busy = busy

    @on(PromptInput.Changed)
    def _typing(self) -> None:
        # The runtime's build (IPython import) competes with typing for the GIL: while the
        # user types before it started, push it back; a submitted task starts it at once.
        if self._start_timer is not None:
            self._start_timer.reset()

    # -- input ---------------------------------------------------------------------------------
    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        text = message.text
        # Narrow layout: the inspector covers the chat and the log; what runs now shows there.
        self.screen_stack[0].remove_class("-show-inspector")
        line = text.strip()
        if line.startswith("/"):
            self._accept(text)
            self.run_command_line(line)
            return
        if self.busy:
            # Sent while a turn or a cell runs (typed ahead, pasted): it runs next, in order.
            self._accept(text)
            self._queued.append(text)
            self.status.queued = len(self._queued)  # told in the status line: no toast on the input
            return
        if self._queued or self._command_running():
            # Sent after a /command that has not finished (a /reset still asking or
            # resetting): it runs once the command has, as sent.
            self._accept(text)
            self._queued.append(text)
            self.status.queued = len(self._queued)
            return
        self._run_line(text)

    def _command_running(self) -> bool:
        """True until the last /command sent has finished (they run one after another)."""
        last = self._last_command
        return last is not None and not last.is_finished

    def _run_next_queued(self) -> None:
        """Run the next queued line if nothing runs now (no turn, cell or /command)."""
        if self._queued and not self.busy and not self._command_running():
            line = self._queued.pop(0)
            self.status.queued = len(self._queued)
            self._run_line(line, queued=True)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "command" and event.worker.is_finished:
            self._run_next_queued()

    def _run_line(self, text: str, *, queued: bool = False) -> None:
        """Run a task or a `!` cell now (the app is idle); a queued line was accepted already."""
        line = text.strip()
        if line.startswith("!"):
            if not queued:
                self._accept(text)
            self.run_python(line[1:].lstrip())
            return
        if self.services.model is None:
            self.chat.add_notice(NO_MODEL_HELP, "warning")
            if not self.prompt.text:  # not sent: the text goes back to the input
                self.prompt.set_text(text)
            return
        if not queued:
            self._accept(text)
        self.start_turn(text)

    def _accept(self, text: str) -> None:
        self.history.add(text)

    def run_command_line(self, line: str) -> None:
        """Run a `/command` line through the shared registry (in a worker: it may ask).

        Commands run one after another, in the order they were sent: `/retrieve x` then
        `/del x` typed fast must not delete `x` before it was saved.
        """
        self.chat.add_notice(f"`{line}`", "command")
        previous = self._last_command

        async def run() -> None:
            if previous is not None:
                await asyncio.gather(previous.wait(), return_exceptions=True)
            await registry.dispatch(line, self.ctx)

        self._last_command = self.run_worker(run(), group="command")

    # -- turns ---------------------------------------------------------------------------------
    def start_turn(self, task: str) -> None:
        """Give *task* to the agent; events come back as `AgentEvent` messages."""
        self.busy = True
        self.status.activity = "starting" if not self.services.ready else "thinking"
        self.run_worker(
            self._consume(self.services.stream(task)),
            group="agent",
            exclusive=True,
            exit_on_error=False,
        )

    def run_python(self, code: str) -> None:
        """Run *code* in the namespace without the model (the `!` prefix)."""
        if not code.strip():
            return
        self.busy = True
        self.status.activity = "running your code"
        self.run_worker(
            self._consume(self.services.run_python(code)),
            group="agent",
            exclusive=True,
            exit_on_error=False,
        )

    def replay(self, events: AsyncIterable[ev.Event]) -> None:
        """Render an event stream as a live turn (cancellable like one); events go to the hooks."""
        self.busy = True
        self.status.activity = "replaying"
        self.run_worker(
            self._consume(_emitting(events, self.services)),
            group="agent",
            exclusive=True,
            exit_on_error=False,
        )

    def replay_session(
        self, folder: Path | str, *, speed: float = 1.0, trust: bool = False
    ) -> None:
        """Replay a recorded session here (recorded replies, live code), then continue live."""
        self.busy = True
        self.status.activity = "replaying"
        self.run_worker(
            self._replay_session(Path(folder), speed, trust),
            group="agent",
            exclusive=True,
            exit_on_error=False,
        )

    async def _replay_session(self, folder: Path, speed: float, trust: bool) -> None:
        from cave_tui.agent import events as ev
        from cave_tui.session import replay_session

        def render(event: ev.Event) -> None:
            self.services.emit(event)
            self.post_message(AgentEvent(event))

        outcome = "done"
        try:
            await self.services.start()
            result = await replay_session(
                folder, runtime=self.services.runtime, render=render, speed=speed, trust=trust
            )
            self.services.continue_from(result.agent)
            self.post_message(ReplayFinished(result.report(), result.ok))
        except asyncio.CancelledError:
            cancelled = ev.CancelledEvent(content="Replay interrupted: the namespace is kept.")
            self.post_message(AgentEvent(cancelled))
            self.post_message(TurnFinished("cancelled"))
            raise
        except Exception as exc:
            error = ev.ErrorEvent(content=f"cannot replay {folder}: {exc}", kind="replay")
            self.post_message(AgentEvent(error))
            outcome = "error"
        self.post_message(TurnFinished(outcome))

    def on_replay_finished(self, message: ReplayFinished) -> None:
        self.chat.add_notice(message.report, "success" if message.ok else "warning")
        self.refresh_inspector()
        if self.services.model is None:
            self.chat.add_notice(
                "The replay is over and its data is live in the namespace: `!` runs Python. "
                + NO_MODEL_HELP.replace(" To try cave without a key, run `cave demo`.", ""),
                "warning",
            )
        else:
            self.chat.add_notice(f"Continuing live with {self.services.model_label}.", "info")

    async def _consume(self, events: AsyncIterable[ev.Event]) -> None:
        from cave_tui.agent import events as ev

        outcome = "done"
        try:
            async for event in events:
                self.post_message(AgentEvent(event))
        except asyncio.CancelledError:
            cancelled = ev.CancelledEvent(content="Interrupted: the partial output is kept.")
            self.services.emit(cancelled)
            self.post_message(AgentEvent(cancelled))
            self.post_message(TurnFinished("cancelled"))
            raise
        except Exception as exc:
            error = ev.ErrorEvent(content=f"{type(exc).__name__}: {exc}", kind="app")
            self.services.emit(error)
            self.post_message(AgentEvent(error))
            outcome = "error"
        self.post_message(TurnFinished(outcome))

    async def _approve(self, request: ApprovalRequest) -> str | None:
        from cave_tui.frontends.tui.screens.approve import ApprovalScreen

        self.status.approving = True
        try:
            return await self.ask_screen(ApprovalScreen(request.code, request.step))
        finally:
            self.status.approving = False

    async def ask_screen(self, screen: Screen[ScreenResult]) -> ScreenResult | None:
        """Push a modal screen and wait for its result (from any task, worker or not).

        If the waiting task is cancelled (the turn was interrupted), the screen is closed.
        """
        loop = asyncio.get_running_loop()
        result: asyncio.Future[ScreenResult | None] = loop.create_future()

        def done(value: ScreenResult | None) -> None:
            if not result.done():
                result.set_result(value)

        self.push_screen(screen, callback=done)
        try:
            return await result
        except asyncio.CancelledError:
            if screen.is_attached and self.screen is screen:
                self.pop_screen()
            raise

    def on_agent_event(self, message: AgentEvent) -> None:
        self.render_event(message.event)

    def on_turn_finished(self, message: TurnFinished) -> None:
        self.busy = False
        self.status.activity = ""
        self.call_later(self.chat.flush_all)
        self.status.reply_done()
        self._run_next_queued()

    def render_event(self, event: ev.Event) -> None:
        """Draw one core event (live, replayed, or from a command like /compact)."""
        kind = event.type
        agent = event.agent
        chat, log, status = self.chat, self.steplog, self.status
        if agent == "user":
            self._render_user_code(event)
            return
        if kind == "user":
            chat.add_user(event.content)
            log.new_turn()
            status.step = 0
        elif kind == "step":
            status.step = event.step
            status.activity = "thinking"
            status.model_called()
        elif kind == "text":
            written = getattr(event, "written", event.content)
            chat.reply(event.step, agent).feed(written)
            status.activity = "writing"
            status.streamed(written)
        elif kind == "code":
            code = getattr(event, "code", event.content)
            earlier = log.current(event.step, agent)
            if earlier is not None and earlier.outcome == "running":  # edited before it ran
                chat.reply(event.step, agent).show_edit(code)
            log.add_code(event.step, agent, code)
            status.activity = f"running step {event.step}"
            status.reply_done()
        elif kind == "output":
            entry = log.current(event.step, agent)
            if entry is not None:
                entry.add_output(event.content, getattr(event, "dropped", 0))
        elif kind == "execution_output":
            changed = list(getattr(event, "changed", []))
            duration = self._duration(getattr(event, "duration", None))
            entry = log.current(event.step, agent)
            if entry is not None:
                entry.finish(
                    "ok", output=getattr(event, "output", ""), duration=duration, changed=changed
                )
            reply = chat.existing_reply(event.step, agent)
            if reply is not None:
                text = "✓ ran" + (f" in {duration}" if duration else "")
                if changed:
                    text += " · changed " + ", ".join(changed[:6])
                reply.set_status(text, "success")
        elif kind in ("execution_error", "security_error"):
            blocked = kind == "security_error"
            error_type = "blocked" if blocked else (getattr(event, "error_type", "") or "error")
            entry = log.current(event.step, agent)
            if entry is not None:
                entry.finish(
                    error_type,
                    output=getattr(event, "output", ""),
                    error=getattr(event, "error", "") or event.content,
                    duration=self._duration(getattr(event, "duration", None)),
                    changed=list(getattr(event, "changed", [])),
                )
            reply = chat.existing_reply(event.step, agent)
            if reply is not None:
                reply.set_status(f"✗ {error_type}", "error")
        elif kind == "final_response":
            status.activity = "done"
            status.reply_done()
            if getattr(event, "unseen", False):  # FinalResponseEvent from final_answer()
                chat.add_answer(event.content, agent)
            if getattr(event, "unsupported", False):  # no successful cell backs it
                from cave_tui.agent.events import UNSUPPORTED_MARK  # loaded: the event came from it

                chat.add_notice(UNSUPPORTED_MARK, "warning")
        elif kind == "max_steps_reached":
            chat.add_notice(event.content, "warning")
        elif kind == "notice":
            from cave_tui.agent.events import NoticeKind  # loaded: the event came from it

            if getattr(event, "kind", None) is NoticeKind.CODE_SKIPPED:
                entry = log.current(event.step, agent)
                if entry is not None:
                    entry.finish("skipped")
                reply = chat.existing_reply(event.step, agent)
                if reply is not None:
                    reply.set_status("skipped by you", "warning")
            else:
                chat.add_notice(event.content, "info")
        elif kind == "intervention":
            self._render_intervention(cast("ev.InterventionEvent", event))
        elif kind == "retry":
            chat.add_notice(f"Model call failed, {event.content}", "warning")
        elif kind == "usage":
            self.usage = self.usage + Usage(
                getattr(event, "prompt_tokens", 0),
                getattr(event, "completion_tokens", 0),
                getattr(event, "total_tokens", 0),
                model_calls=1,
            )
            status.tokens_in = self.usage.prompt_tokens
            status.tokens_out = self.usage.completion_tokens
            status.model = self.services.model_label  # a local model's speed
            if self.services.priced:
                self._update_cost()
        elif kind == "error":
            chat.add_notice(
                f"**Error** ({getattr(event, 'kind', 'error')}): {event.content}", "error"
            )
        elif kind == "cancelled":
            chat.add_notice(event.content or "Interrupted.", "warning")
            for entry in log.entries.values():
                if entry.outcome == "running":
                    entry.finish("interrupted")
        elif kind == "compacting":
            chat.add_notice("Compacting the conversation…", "info")
        elif kind == "compacted":
            before = getattr(event, "tokens_before", 0)
            after = getattr(event, "tokens_after", 0)
            chat.add_notice(f"Context compacted: {before:,} → {after:,} tokens.", "info")

    def _render_intervention(self, event: ev.InterventionEvent) -> None:
        """A policy's act: a note in the code log; a refusal ends its cell; a kept object
        is told in the chat too (the user may want it back)."""
        from cave_tui.agent.display import intervention_line
        from cave_tui.agent.events import InterventionKind  # loaded: the event came from it

        line = intervention_line(event)
        entry = self.steplog.current(event.step, event.agent)
        refused = event.kind is InterventionKind.REFUSE
        if entry is not None and (refused or entry.outcome == "running"):  # never ran
            entry.finish(f"not run · {event.policy}", error=event.content)
        elif entry is not None:
            entry.add_note(line)
        if event.kind is InterventionKind.KEEP:
            self.chat.add_notice(f"{event.content} (/restore NAME)", "info")
        elif event.kind is not InterventionKind.TIP and entry is None:
            self.chat.add_notice(line, "info")

    def draw_transcript(self, events: list[ev.Event]) -> None:
        """Draw a recorded session's events (resume, /load) as they were; then it settles."""
        for event in events:
            self.render_event(event)
        self.chat.flush_all()
        self.status.activity = ""

    def _render_user_code(self, event: ev.Event) -> None:
        from cave_tui.agent import events as ev  # loaded: the event came from it

        log = self.steplog
        if isinstance(event, ev.CodeEvent):
            log.add_code(0, "user", getattr(event, "code", event.content))
            return
        entry = log.current(0, "user")
        if entry is None:
            return
        if isinstance(event, ev.OutputEvent):
            entry.add_output(event.content, getattr(event, "dropped", 0))
            return
        changed = list(getattr(event, "changed", []))
        duration = self._duration(getattr(event, "duration", None))
        if isinstance(event, ev.ExecutionOutputEvent):
            entry.finish(
                "ok", output=getattr(event, "output", ""), duration=duration, changed=changed
            )
        else:
            entry.finish(
                getattr(event, "error_type", "") or "error",
                output=getattr(event, "output", ""),
                error=getattr(event, "error", "") or event.content,
                duration=duration,
                changed=changed,
            )

    def _duration(self, seconds: float | None) -> str:
        return format_duration(seconds) if self.animate_ui else ""

    @work(group="cost", exclusive=True, exit_on_error=False)
    async def _update_cost(self) -> None:
        self.post_message(CostEstimate(await self.services.cost(self.usage)))

    def on_cost_estimate(self, message: CostEstimate) -> None:
        self.status.cost = message.cost

    # -- inspector -----------------------------------------------------------------------------
    def on_namespace_changed(self, message: NamespaceChanged) -> None:
        self.refresh_inspector(list(message.change.changed))

    def refresh_inspector(self, changed: list[str] | None = None) -> None:
        """Reload the namespace rows; *changed* names are highlighted.

        Coalescing: one listing runs at a time, and changes that arrive meanwhile make one
        more (a /load deleting 10,000 names lists the namespace twice, not 10,000 times).
        """
        self._inspector_changed |= set(changed or [])
        self._inspector_dirty = True
        if not self._inspector_loading:
            self._inspector_loading = True
            self._load_namespace()

    @work(group="inspector", exit_on_error=False)
    async def _load_namespace(self) -> None:
        try:
            while self._inspector_dirty:
                runtime = self.services.runtime
                if runtime is None or not self.services.ready:
                    return  # on_services_ready refreshes
                self._inspector_dirty = False
                changed, self._inspector_changed = self._inspector_changed, set()
                rows = await _listing_off_loop(runtime)
                self.post_message(NamespaceRows(rows, changed))
        finally:
            self._inspector_loading = False

    def on_namespace_rows(self, message: NamespaceRows) -> None:
        self.inspector.set_rows(message.rows, message.changed)

    @on(VarTable.Selected)
    def _open_detail(self, message: VarTable.Selected) -> None:
        self.open_detail(message.name)

    def open_detail(self, name: str) -> None:
        from cave_tui.frontends.tui.screens.detail import DetailScreen

        runtime = self.services.runtime
        if runtime is None:
            self.notify("The runtime is still starting.", severity="warning")
            return
        self.push_screen(
            DetailScreen(name, runtime, animate=self.animate_ui), callback=self._detail_action
        )

    def _detail_action(self, result: tuple[str, str] | None) -> None:
        if result is None:
            return
        action, name = result
        if action == "insert":
            self.prompt.insert_text(name)
        elif action == "delete":
            self.run_worker(self._delete_variable(name), group="command")
        elif action == "retrieve":
            self.run_worker(self._retrieve_variable(name), group="command")

    async def _delete_variable(self, name: str) -> None:
        if not await self.ctx.confirm(f"Delete `{name}` from the namespace?"):
            return
        await registry.dispatch(f"/del {name}", self.ctx)

    async def _retrieve_variable(self, name: str) -> None:
        if registry.get("retrieve") is not None:  # the data commands, when installed
            await registry.dispatch(f"/retrieve {name}", self.ctx)
            return
        from cave_tui.app.detail import default_filename, free_path, human_bytes, write_object

        try:
            obj = await self.services.live_runtime.retrieve(name)
            path = free_path(Path.cwd() / "retrieved", default_filename(name, obj))
            await asyncio.to_thread(write_object, obj, path)
        except Exception as exc:
            self.chat.add_notice(f"Could not retrieve `{name}`: {exc}", "error")
            return
        size = human_bytes(path.stat().st_size)
        self.chat.add_notice(f"Retrieved `{name}` to `{path}` ({size}).", "success")

    def set_theme(self, name: str) -> None:
        if name not in self.available_themes:
            self.chat.add_notice(f"Unknown theme {name!r}.", "error")
            return
        self.theme = name  # _theme_changed persists it

    def _theme_changed(self, theme: Any) -> None:
        self.chat.restyle(theme.dark)
        if theme.name != self.config.theme:
            self.config.theme = theme.name
            self.chat.add_notice(f"Theme set to `{theme.name}`.", "success")
            if self.persist_settings:
                self._persist("theme", theme.name)

    @work(thread=True, group="persist", exit_on_error=False)
    def _persist(self, name: str, value: Any) -> None:
        try:
            save_setting(name, value)
        except Exception as exc:
            self.call_from_thread(
                self.chat.add_notice, f"Could not save {name} in config.toml: {exc}", "warning"
            )

    # -- key actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("interrupt", "cancel_turn"):
            return self.busy
        if action == "quit_twice":
            return not self.busy
        return True

    def cancel_turn(self) -> None:
        self.workers.cancel_group(self, "agent")

    def action_cancel_turn(self) -> None:
        self.cancel_turn()

    async def action_interrupt(self) -> None:
        if self._quitting:
            self._leave_now("Ctrl+C was pressed while cave was saving before exit")
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_PRESS_SECONDS:
            self.action_request_quit()
            return
        self._last_ctrl_c = now
        self.cancel_turn()
        self.notify("Interrupted. Press Ctrl+C again to quit.", timeout=DOUBLE_PRESS_SECONDS)

    async def action_quit_twice(self) -> None:
        if self._quitting:
            self._leave_now("Ctrl+C was pressed while cave was saving before exit")
            return
        now = time.monotonic()
        if now - self._last_ctrl_c < DOUBLE_PRESS_SECONDS:
            self.action_request_quit()
            return
        self._last_ctrl_c = now
        self.notify("Press Ctrl+C again to quit.", timeout=DOUBLE_PRESS_SECONDS)

    def action_request_quit(self) -> None:
        """Ctrl+Q and /quit: start the exit (the same path as SIGTERM, SIGHUP) and return.

        The exit runs as a task, so keys still work meanwhile: quitting again (Ctrl+Q,
        Ctrl+C, a signal) while it saves leaves at once (`_leave_now`)."""
        if self._quitting:
            self._leave_now("Ctrl+Q was pressed again while cave was saving before exit")
            return
        self._quitting = True
        self._quit_task = asyncio.ensure_future(self._quit())

    async def action_quit(self) -> None:
        """Quit after the exit hooks ran: `action_request_quit`, then wait for the exit."""
        self.action_request_quit()
        if self._quit_task is not None:
            await asyncio.shield(self._quit_task)

    async def _quit(self) -> None:
        if await self._dump_failed_before_quit():
            self._quitting = False
            return
        self.cancel_turn()
        self.notify("Saving before quitting. Press Ctrl+Q again to leave now, without it.")
        await self.services.shutdown()
        self.exit()

    def _leave_now(self, reason: str, code: int = 130) -> None:
        """Leave without waiting for the exit to finish saving: the session record is closed
        at once and what was not written is said once the terminal is restored."""
        self.services.leave_now(reason, code)
        self.exit()

    async def _dump_failed_before_quit(self) -> bool:
        """Write `--dump DIR` before leaving; if that fails, say so in red and stay open
        (once), so nothing is lost: `/dump` elsewhere, or quit again to leave (exit 3)."""
        features = self.services.data_features
        if self._forced_quit or self._dump_warned or self.busy or features is None:
            return False
        if not features.dump_pending or await features.dump_now():
            return False
        self._dump_warned = True
        self.chat.add_notice(
            f"The {features.dump_failure()}. Quit again to leave without the dump "
            "(exit code 3), or `/dump DIR` somewhere else first.",
            "error",
        )
        return True

    def action_help(self) -> None:
        from cave_tui.frontends.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_inspector(self) -> None:
        screen = self.screen_stack[0]
        table = self.inspector.table
        if screen.has_class("-narrow"):
            screen.toggle_class("-show-inspector")
            if screen.has_class("-show-inspector"):
                table.focus()
            else:
                self.prompt.focus()
        elif table.has_focus:
            self.prompt.focus()
        else:
            table.focus()

    def action_unfold(self) -> None:
        """Ctrl+O: unfold (or fold again) the newest long output in the log."""
        if self.steplog.toggle_latest() is None:
            self.notify("No folded output in the log.", severity="information")

    def action_clear(self) -> None:
        self.chat.clear()
        self.steplog.clear()


async def _listing_off_loop(runtime: Any) -> Any:
    """`namespace_listing()` (every name), on a worker thread for the in-process runtime.

    Describing 10,000 names takes ~0.4 s of Python; off the event loop the app keeps
    drawing meanwhile. The kernel runtime's listing is already asynchronous I/O.
    """
    if runtime.in_process:
        return await asyncio.to_thread(asyncio.run, runtime.namespace_listing())
    return await runtime.namespace_listing()


async def _emitting(events: AsyncIterable[ev.Event], services: AppServices) -> Any:
    async for event in events:
        services.emit(event)
        yield event
