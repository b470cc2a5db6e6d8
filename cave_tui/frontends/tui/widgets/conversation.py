"""`Conversation`: the chat and the code log, drawn from the core's events.

One handler per event class (Toad's `Conversation`): `show(event)` matches the event's class
and calls `_user`, `_text`, `_code`, ... A new event class gets its own case and handler;
front ends never compare `event.type` (tests/frontends/test_events_by_class.py checks).
The status line is updated from here too; a model call's usage goes to `count_usage`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from textual.app import ComposeResult
from textual.containers import Vertical

from cave_tui.agent.events import (
    UNSUPPORTED_MARK,
    USER_AGENT,
    CancelledEvent,
    CellResultEvent,
    CodeEvent,
    CompactedEvent,
    CompactingEvent,
    ErrorEvent,
    Event,
    ExecutionErrorEvent,
    ExecutionOutputEvent,
    FinalResponseEvent,
    InterventionEvent,
    InterventionKind,
    MaxStepsReachedEvent,
    NoticeEvent,
    NoticeKind,
    OutputEvent,
    RetryEvent,
    SecurityErrorEvent,
    StepEvent,
    TextEvent,
    UsageEvent,
    UserEvent,
)
from cave_tui.app.commands.data import shown_path
from cave_tui.frontends.tui.widgets.chat import ChatPane
from cave_tui.frontends.tui.widgets.status import StatusLine
from cave_tui.frontends.tui.widgets.steplog import StepEntry, StepLog, format_duration


def show_figures(entry: StepEntry, event: CellResultEvent) -> None:
    """Draw the cell's figures under it (a failed cell's too: what it drew before it
    failed): its PNGs when live, the saved files when resumed."""
    from cave_tui.session.figures import read_figure

    pngs = list(event.figures)
    if not pngs:  # a recorded cell: its figures are in the session folder
        pngs = [png for path in event.saved_figures if (png := read_figure(Path(path)))]
    if pngs:
        entry.add_figures(pngs, [shown_path(Path(p)) for p in event.saved_figures])


if TYPE_CHECKING:
    from cave_tui.frontends.tui.widgets.search import SearchBar


class Conversation(Vertical):
    """The chat above the code log; draws any core event, live, replayed or recorded."""

    def __init__(
        self,
        status: StatusLine,
        *,
        on_usage: Callable[[UsageEvent], None],
        animate: bool = True,
        id: str | None = None,
    ) -> None:
        super().__init__(id=id)
        self.chat = ChatPane(id="chat")
        self.steplog = StepLog(id="log")
        self.status = status
        self.count_usage = on_usage  # the app counts a model call's tokens (and its cost)
        self.timed = animate  # durations are shown only when the UI animates
        self.leads_told: set[str] = set()  # policies whose reply lead the chat has shown

    def compose(self) -> ComposeResult:
        yield self.chat
        yield self.steplog

    def search(self, on_close: Callable[[], None]) -> SearchBar:
        """Open the search bar (Ctrl+F), or focus it when open; *on_close* runs on Esc."""
        from cave_tui.frontends.tui.widgets.search import SearchBar

        bars = self.query(SearchBar)
        bar = bars.first() if bars else SearchBar(self.chat, self.steplog, on_close)
        if not bars:
            self.mount(bar, before=self.chat)
        self.call_after_refresh(bar.input.focus)
        return bar

    def clear(self) -> None:
        self.chat.clear()
        self.steplog.clear()

    def draw(self, events: Iterable[Event]) -> None:
        """Draw a recorded session's events (resume, /load) as they were; then it settles."""
        for event in events:
            self.show(event)
        self.chat.flush_all()
        self.status.activity = ""

    def show(self, event: Event) -> None:
        """Draw one core event: the handler of its class."""
        match event:
            case CodeEvent() | OutputEvent() | ExecutionOutputEvent() | ExecutionErrorEvent() if (
                event.agent == USER_AGENT
            ):
                self._user_cell(event)
            case UserEvent():
                self._user(event)
            case StepEvent():
                self._step(event)
            case TextEvent():
                self._text(event)
            case CodeEvent():
                self._code(event)
            case OutputEvent():
                self._output(event)
            case ExecutionOutputEvent():
                self._cell_ok(event)
            case ExecutionErrorEvent() | SecurityErrorEvent():
                self._cell_failed(event)
            case FinalResponseEvent():
                self._answer(event)
            case MaxStepsReachedEvent():
                self.chat.add_notice(event.content, "warning")
            case NoticeEvent():
                self._notice(event)
            case InterventionEvent():
                self._intervention(event)
            case RetryEvent():
                self.chat.add_notice(f"Model call failed, {event.content}", "warning")
            case UsageEvent():
                self.count_usage(event)
            case ErrorEvent():
                self.chat.add_notice(f"**Error** ({event.kind}): {event.content}", "error")
            case CancelledEvent():
                self._cancelled(event)
            case CompactingEvent():
                self.chat.add_notice("Compacting the conversation…", "info")
            case CompactedEvent():
                before, after = event.tokens_before, event.tokens_after
                self.chat.add_notice(f"Context compacted: {before:,} → {after:,} tokens.", "info")

    def _duration(self, seconds: float) -> str:
        return format_duration(seconds) if self.timed else ""

    def _user(self, event: UserEvent) -> None:
        self.chat.add_user(event.content)
        self.steplog.new_turn()
        self.status.step = 0

    def _step(self, event: StepEvent) -> None:
        status = self.status
        status.step = event.step
        status.activity = "thinking"
        status.model_called()

    def _text(self, event: TextEvent) -> None:
        written = event.written
        self.chat.reply(event.step, event.agent).feed(written)
        self.status.activity = "writing"
        self.status.streamed(written)

    def _code(self, event: CodeEvent) -> None:
        earlier = self.steplog.current(event.step, event.agent)
        if earlier is not None and earlier.outcome == "running":  # edited before it ran
            self.chat.reply(event.step, event.agent).show_edit(event.code)
        self.steplog.add_code(event.step, event.agent, event.code)
        self.status.activity = f"running step {event.step}"
        self.status.reply_done()

    def _output(self, event: OutputEvent) -> None:
        entry = self.steplog.current(event.step, event.agent)
        if entry is not None:
            entry.add_output(event.content, event.dropped)

    def _cell_ok(self, event: ExecutionOutputEvent) -> None:
        changed = list(event.changed)
        duration = self._duration(event.duration)
        entry = self.steplog.current(event.step, event.agent)
        if entry is not None:
            entry.finish("ok", output=event.output, duration=duration, changed=changed)
            entry.set_result_frame(event.result_frame)
            show_figures(entry, event)
        reply = self.chat.existing_reply(event.step, event.agent)
        if reply is not None:
            text = "✓ ran" + (f" in {duration}" if duration else "")
            if changed:
                text += " · changed " + ", ".join(changed[:6])
            reply.set_status(text, "success")

    def _cell_failed(self, event: ExecutionErrorEvent | SecurityErrorEvent) -> None:
        if isinstance(event, SecurityErrorEvent):
            error_type, output, error, duration, changed = "blocked", "", "", "", []
        else:
            error_type = event.error_type or "error"
            output, error = event.output, event.error
            duration, changed = self._duration(event.duration), list(event.changed)
        entry = self.steplog.current(event.step, event.agent)
        if entry is not None:
            entry.finish(
                error_type,
                output=output,
                error=error or event.content,
                duration=duration,
                changed=changed,
            )
            if isinstance(event, ExecutionErrorEvent):
                show_figures(entry, event)
        reply = self.chat.existing_reply(event.step, event.agent)
        if reply is not None:
            reply.set_status(f"✗ {error_type}", "error")

    def _answer(self, event: FinalResponseEvent) -> None:
        self.status.activity = "done"
        self.status.reply_done()
        if event.unseen:  # the answer of final_answer(): never streamed
            self.chat.add_answer(event.content, event.agent)
        if event.unsupported:  # no successful cell backs it
            self.chat.add_notice(UNSUPPORTED_MARK, "warning")

    def _notice(self, event: NoticeEvent) -> None:
        if event.kind is not NoticeKind.CODE_SKIPPED:
            self.chat.add_notice(event.content, "info")
            return
        entry = self.steplog.current(event.step, event.agent)
        if entry is not None:
            entry.finish("skipped")
        reply = self.chat.existing_reply(event.step, event.agent)
        if reply is not None:
            reply.set_status("skipped by you", "warning")

    def _intervention(self, event: InterventionEvent) -> None:
        """A policy's act: a note in the code log; a refusal ends its cell; a kept object
        is told in the chat too (the user may want it back); a reply lead, the same each
        turn, in the chat once."""
        from cave_tui.agent.display import intervention_line  # Rich Markdown: not at start-up

        line = intervention_line(event)
        entry = self.steplog.current(event.step, event.agent)
        refused = event.kind is InterventionKind.REFUSE
        runs = event.kind is InterventionKind.REWRITE  # it runs, as the policy wrote it
        if entry is not None and (refused or (entry.outcome == "running" and not runs)):
            entry.finish(f"not run · {event.policy}", error=event.content)
        elif entry is not None:
            entry.add_note(line)
        if event.kind is InterventionKind.KEEP:
            self.chat.add_notice(f"{event.content} (/restore NAME)", "info")
        elif event.kind is InterventionKind.LEAD:  # the same every turn: told once
            if event.policy not in self.leads_told:
                self.leads_told.add(event.policy)
                self.chat.add_notice(line, "info")
        elif event.kind is not InterventionKind.TIP and entry is None:
            self.chat.add_notice(line, "info")

    def _cancelled(self, event: CancelledEvent) -> None:
        self.chat.add_notice(event.content or "Interrupted.", "warning")
        for entry in self.steplog.entries.values():
            if entry.outcome == "running":
                entry.finish("interrupted")

    def _user_cell(
        self, event: CodeEvent | OutputEvent | ExecutionOutputEvent | ExecutionErrorEvent
    ) -> None:
        """A cell the user ran (`!`): only the code log shows it."""
        log = self.steplog
        if isinstance(event, CodeEvent):
            log.add_code(0, USER_AGENT, event.code)
            return
        entry = log.current(0, USER_AGENT)
        if entry is None:
            return
        match event:
            case OutputEvent():
                entry.add_output(event.content, event.dropped)
            case ExecutionOutputEvent():
                duration = self._duration(event.duration)
                entry.finish("ok", output=event.output, duration=duration, changed=event.changed)
                entry.set_result_frame(event.result_frame)
                show_figures(entry, event)
            case ExecutionErrorEvent():
                entry.finish(
                    event.error_type or "error",
                    output=event.output,
                    error=event.error or event.content,
                    duration=self._duration(event.duration),
                    changed=list(event.changed),
                )
                show_figures(entry, event)
