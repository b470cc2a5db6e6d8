"""`CaveApp`: the Textual front end, the wiring of the screen.

One handler per message and per key action; each concern with a name of its own lives
beside it, and the app holds one of each: `Conversation` (widgets/conversation.py: the chat
and the code log, one handler per event class), `TurnRunner` (turns.py), `SentLines`
(sent_lines.py: what a sent line does, and its queue), `KeyRouter` (key_routing.py),
`ExitControl` (exiting.py), `NamespaceFeed` (namespace_feed.py: the inspector's rows),
`ThemeChoice` (theme_choice.py), `AppStart` (start_up.py), `TuiFrontEnd` (front_end.py:
what commands ask of the app); messages.py holds what workers post.

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

import threading
import time
from collections.abc import AsyncIterable, Callable
from pathlib import Path
from typing import TYPE_CHECKING

from textual import events, on, work
from textual.app import App, ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal
from textual.worker import Worker

from cave_tui.app.commands import CommandContext, load_commands, registry
from cave_tui.app.config import history_path
from cave_tui.app.history import InputHistory
from cave_tui.app.services import NO_MODEL_HELP, AppServices
from cave_tui.frontends.tui.exiting import ExitControl
from cave_tui.frontends.tui.front_end import TuiFrontEnd
from cave_tui.frontends.tui.host import CaveHost
from cave_tui.frontends.tui.key_routing import KeyRouter
from cave_tui.frontends.tui.keys import move_focus
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
from cave_tui.frontends.tui.namespace_feed import NamespaceFeed
from cave_tui.frontends.tui.screens.base import ANSWER_GRACE
from cave_tui.frontends.tui.sent_lines import SentLines
from cave_tui.frontends.tui.start_up import STARTUP_DELAY, AppStart
from cave_tui.frontends.tui.theme_choice import ThemeChoice
from cave_tui.frontends.tui.turns import TurnRunner
from cave_tui.frontends.tui.widgets.conversation import Conversation
from cave_tui.frontends.tui.widgets.inspector import Inspector, VarTable
from cave_tui.frontends.tui.widgets.keybar import KeyBar
from cave_tui.frontends.tui.widgets.load_progress import LoadBars
from cave_tui.frontends.tui.widgets.prompt import PromptArea, PromptInput
from cave_tui.frontends.tui.widgets.status import StatusLine
from cave_tui.frontends.tui.widgets.steplog import StepEntry, StepLog
from cave_tui.models.base import Usage

if TYPE_CHECKING:
    from textual.command import Provider
    from textual.widget import Widget

    from cave_tui.agent import events as ev


def _slash_commands() -> type[Provider]:
    from cave_tui.frontends.tui.palette import (
        SlashCommands,  # textual.command loads with the palette
    )

    return SlashCommands


class CaveApp(CaveHost):
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
        Binding("ctrl+f", "search", "Search", show=False, id="cave.search"),
    ]

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
        self.answer_grace = answer_grace  # a dialog's quiet time before an answer key counts
        path = history_path() if history_file is True else (history_file or None)
        self.history = InputHistory(path)
        self.front_end = TuiFrontEnd(self)
        self.ctx = CommandContext(services, self.front_end)
        self.usage = Usage()
        self.keys = KeyRouter(self)
        # (session folder, speed, trust) replayed once the runtime is up (`cave demo`)
        self.startup_replay: tuple[Path, float, bool] | None = None
        self.startup_tasks: list[str] = []  # asked in order once the runtime is up (cave demo)
        self.themes = ThemeChoice(self, persist=persist_settings)
        self.themes.register()
        if self.config.keymap:
            self.set_keymap(self.config.keymap)
        self.turns = TurnRunner(self)
        self.exiting = ExitControl(self)
        self.namespace = NamespaceFeed(self)
        self.lines = SentLines(self)
        self.start_up = AppStart(self, start_delay)
        services.use_approver(self.turns.approve)
        services.progress_hooks.append(self.front_end.progress)  # the exit's `--dump`
        # Every namespace change reaches the inspector from the runtime itself.
        services.namespace_hooks.append(lambda change: self.post_message(NamespaceChanged(change)))

    # -- setup ---------------------------------------------------------------------------------
    def compose(self) -> ComposeResult:
        # References are kept: `query_one` would search a modal screen when one is open.
        self.status = StatusLine(id="status", clock=self.clock, animate=self.animate_ui)
        if self.busy:
            self.status.busy = True
        self.conversation = Conversation(
            self.status, on_usage=self._count_usage, animate=self.animate_ui, id="work"
        )
        self.chat = self.conversation.chat
        self.loads = LoadBars(self.chat)  # a load's progress bars (Esc, Ctrl+C cancel)
        self.steplog: StepLog = self.conversation.steplog
        self.inspector = Inspector(id="inspector")
        prompt_area = PromptArea(history=self.history, completer=registry.complete)
        self.prompt = prompt_area.input
        with Horizontal(id="main"):
            yield self.conversation
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
        if isinstance(event, events.Key | events.Paste) and self.keys.consumed(event):
            return  # key_routing.py: held at start-up, given to the input, or dropped
        await super().on_event(event)

    def take_typing(self, widget: Widget, event: events.Key | events.Paste) -> bool:
        """Text typed in a pane goes to the input (`keys.TypingOwner`, key_routing.py)."""
        return self.keys.take_typing(widget, event)

    def on_mount(self) -> None:
        self._fit_layout()
        prompt = self.prompt
        prompt.cursor_blink = self.animate_ui
        self.screen.set_focus(prompt)
        self.keys.release_early()
        self.chat.dark = self.current_theme.dark
        self.theme_changed_signal.subscribe(self, self.themes.changed)
        self.update_status()
        for notice in [*self.services.notices, *self.themes.notices]:
            self.chat.add_notice(notice, "warning")
        self.services.notices.clear()
        if self.services.model is None and self.startup_replay is None:
            self.chat.add_notice(NO_MODEL_HELP, "warning")
        self.exiting.install_signal_handlers()
        self.start_up.begin()  # start_up.py: once the first frame is drawn

    def on_unmount(self) -> None:
        self.exiting.remove_signal_handlers()

    @property
    def in_app_thread(self) -> bool:
        """True on the thread that runs the app's event loop (where widgets may be touched)."""
        return threading.get_ident() == self._thread_id

    def on_chat_notice(self, message: ChatNotice) -> None:
        self.chat.add_notice(message.text, message.style)

    def on_load_progress(self, message: LoadProgress) -> None:
        first = not self.loads.running
        self.loads.show(message.progress, message.label)
        if first:
            self.refresh_bindings()  # Esc and Ctrl+C now cancel the load

    def on_start_failed(self, message: StartFailed) -> None:
        self.chat.add_notice(f"The runtime could not start: {message.error}", "error")

    def on_step_entry_open_frame(self, message: StepEntry.OpenFrame) -> None:
        # A cell's frame result opens in the inspector's detail view (namespace_feed.py).
        self.open_detail(message.name)

    def on_step_log_width_changed(self, message: StepLog.WidthChanged) -> None:
        # Frames a cell prints fit the log: the runtime prints the next cells at its width.
        self.services.set_display_width(message.width)

    def on_services_ready(self, message: ServicesReady) -> None:
        self.start_up.ready()

    # -- status --------------------------------------------------------------------------------
    def update_status(self) -> None:
        status, services = self.status, self.services
        status.model = services.model_label
        status.runtime = services.runtime_label if services.ready else "starting…"
        status.memory = services.runtime_memory
        status.policy = self.config.policy
        preset = services.preset_choice()
        status.aids, status.aids_why = preset.preset, preset.reason
        status.approve = self.config.approve
        status.tokens_in = self.usage.prompt_tokens
        status.tokens_out = self.usage.completion_tokens

    def refresh_bindings(self) -> None:
        # A turn that ends while the app closes has no screen left to refresh.
        if self._screen_stacks.get(self._current_mode):
            super().refresh_bindings()

    def watch_busy(self, busy: bool) -> None:
        # The status line is made by compose(), which then shows a busy state set before it.
        status: StatusLine | None = getattr(self, "status", None)
        if status is not None:
            status.busy = busy

    @on(PromptInput.Changed)
    def _typing(self) -> None:
        # The runtime's build (IPython import) competes with typing for the GIL: while the
        # user types before it started, push it back; a submitted task starts it at once.
        self.start_up.typed()

    # -- input (sent_lines.py) ----------------------------------------------------------------
    @on(PromptInput.Submitted)
    def _submitted(self, message: PromptInput.Submitted) -> None:
        # Narrow layout: the inspector covers the chat and the log; what runs now shows there.
        self.screen_stack[0].remove_class("-show-inspector")
        self.lines.submit(message.text)

    @on(Worker.StateChanged)
    def _worker_changed(self, event: Worker.StateChanged) -> None:
        if event.worker.group == "command" and event.worker.is_finished:
            if self.loads.running:
                self.loads.finish()
                self.refresh_bindings()
            self.lines.run_next()

    def run_command_line(self, line: str) -> None:
        self.lines.run_command_line(line)

    def run_lines(self, lines: list[str]) -> None:
        first, *rest = lines
        self.lines.queue(rest)
        self.lines.run(first, queued=True)

    # -- turns (turns.py) ----------------------------------------------------------------------
    def start_turn(self, task: str) -> None:
        self.turns.start_turn(task)

    def run_python(self, code: str) -> None:
        self.turns.run_python(code)

    def replay(self, events: AsyncIterable[ev.Event]) -> None:
        self.turns.replay(events)

    def replay_session(
        self, folder: Path | str, *, speed: float = 1.0, trust: bool = False
    ) -> None:
        self.turns.replay_session(Path(folder), speed=speed, trust=trust)

    def on_replay_finished(self, message: ReplayFinished) -> None:
        self.turns.replay_finished(message)

    def on_agent_event(self, message: AgentEvent) -> None:
        self.render_event(message.event)

    def on_turn_finished(self, message: TurnFinished) -> None:
        self.busy = False
        self.status.activity = ""
        self.call_later(self.chat.flush_all)
        self.status.reply_done()
        self.lines.run_next()

    def render_event(self, event: ev.Event) -> None:
        """Draw one core event (live, replayed, or from a command like /compact)."""
        self.conversation.show(event)

    def draw_transcript(self, events: list[ev.Event]) -> None:
        """Draw a recorded session's events (resume, /load) as they were; then it settles."""
        self.conversation.draw(events)

    def _count_usage(self, event: ev.UsageEvent) -> None:
        """A model call's tokens: added to the run's, shown with its cost (LiteLLM's)."""
        self.usage = self.usage + Usage(
            event.prompt_tokens, event.completion_tokens, event.total_tokens, model_calls=1
        )
        status = self.status
        status.tokens_in = self.usage.prompt_tokens
        status.tokens_out = self.usage.completion_tokens
        status.model = self.services.model_label  # a local model's speed
        if self.services.priced:
            self._update_cost()

    @work(group="cost", exclusive=True, exit_on_error=False)
    async def _update_cost(self) -> None:
        self.post_message(CostEstimate(await self.services.cost(self.usage)))

    def on_cost_estimate(self, message: CostEstimate) -> None:
        self.status.cost = message.cost

    # -- inspector (namespace_feed.py) ---------------------------------------------------------
    def on_namespace_changed(self, message: NamespaceChanged) -> None:
        self.namespace.refresh(list(message.change.changed))

    def refresh_inspector(self, changed: list[str] | None = None) -> None:
        """Reload the namespace rows; *changed* names are highlighted."""
        self.namespace.refresh(changed)

    def on_namespace_rows(self, message: NamespaceRows) -> None:
        self.inspector.set_rows(message.rows, message.changed)

    @on(VarTable.Selected)
    def _open_detail(self, message: VarTable.Selected) -> None:
        self.namespace.open_detail(message.name)

    def open_detail(self, name: str) -> None:
        self.namespace.open_detail(name)

    def set_theme(self, name: str) -> None:
        self.themes.set(name)

    # -- key actions ---------------------------------------------------------------------------
    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action in ("interrupt", "cancel_turn"):
            return self.busy or self.loads.running
        if action == "quit_twice":
            return not (self.busy or self.loads.running)
        return True

    def cancel_turn(self) -> None:
        self.workers.cancel_group(self, "agent")
        if self.loads.running:  # a command loading a file: it injects nothing
            self.workers.cancel_group(self, "command")
            self.services.cancel_start_loads()  # or the start's: the start goes on

    def action_cancel_turn(self) -> None:
        self.cancel_turn()

    async def action_interrupt(self) -> None:
        self.exiting.interrupt()

    async def action_quit_twice(self) -> None:
        self.exiting.quit_twice()

    def action_request_quit(self) -> None:
        """Ctrl+Q and /quit: start the exit and return (exiting.py)."""
        self.exiting.request_quit()

    async def action_quit(self) -> None:
        """Quit after the exit hooks ran (exiting.py)."""
        await self.exiting.quit()

    def action_help(self) -> None:
        from cave_tui.frontends.tui.screens.help import HelpScreen

        if not isinstance(self.screen, HelpScreen):
            self.push_screen(HelpScreen())

    def action_inspector(self) -> None:
        screen = self.screen_stack[0]
        table = self.inspector.table
        # At once (`move_focus`): a key sent right after F2 (Ctrl+F: the filter) is the table's.
        if screen.has_class("-narrow"):
            screen.toggle_class("-show-inspector")
            if screen.has_class("-show-inspector"):
                move_focus(table)
            else:
                move_focus(self.prompt)
        elif table.has_focus:
            move_focus(self.prompt)
        else:
            move_focus(table)

    def action_unfold(self) -> None:
        """Ctrl+O: unfold (or fold again) the newest long output in the log."""
        if self.steplog.toggle_latest() is None:
            self.notify("No folded output in the log.", severity="information")

    def action_search(self) -> None:
        """Ctrl+F: find in the chat and the log (widgets/search.py); Esc back to the input."""
        self.conversation.search(lambda: self.screen.set_focus(self.prompt))

    def action_clear(self) -> None:
        self.conversation.clear()
