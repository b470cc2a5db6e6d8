"""`SearchBar`: Ctrl+F finds text in the chat and the code log.

Type to find (case-insensitive); Enter or F3 goes to the next match, Shift+Enter or
Shift+F3 (or ↑) to the previous one; the match is highlighted and scrolled into view, a
folded output unfolds to show it; Esc closes the bar and gives the focus back to the input.

What is searched is the text each widget was given (the user's line, the model's Markdown,
a cell's code, its output as printed), never the rendered markup: kernel text such as
`[bold]` is found as the characters it is.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.text import Text
from textual import on
from textual.binding import Binding
from textual.containers import Horizontal
from textual.widget import Widget
from textual.widgets import Input, Static

from cave_tui.frontends.tui.widgets.chat import AgentMessage, Answer, Notice, UserMessage
from cave_tui.frontends.tui.widgets.steplog import FoldedOutput, StepEntry
from cave_tui.printable import printable

if TYPE_CHECKING:
    from textual.app import ComposeResult

    from cave_tui.frontends.tui.widgets.chat import ChatPane
    from cave_tui.frontends.tui.widgets.steplog import StepLog

HIT_CLASS = "-search-hit"
HIT_STYLE = "reverse"


@dataclass(frozen=True)
class Match:
    """One occurrence of the query: in *widget*'s *text*, at *start*."""

    widget: Widget
    text: str
    start: int


def searchable(chat: ChatPane, log: StepLog) -> Iterator[tuple[Widget, str]]:
    """Every widget of the chat, then of the log, with the plain text it shows, in order."""
    for child in chat.children:
        if isinstance(child, UserMessage):
            yield child, printable(child.text)  # as it is shown
        elif isinstance(child, AgentMessage | Answer | Notice):
            yield child, child.text
    for entry in log.children:
        if not isinstance(entry, StepEntry):
            continue
        yield entry.code_view, printable(entry.code)  # as it is shown
        if entry.live is not None:
            yield entry.live, entry.live_text
        for output in entry.query(FoldedOutput):
            yield output, output.full


def find(items: Iterator[tuple[Widget, str]], query: str) -> list[Match]:
    """Every occurrence of *query* (case-insensitive) in *items*, in order."""
    needle = query.casefold()
    if not needle:
        return []
    found = []
    for widget, text in items:
        haystack = text.casefold()
        start = haystack.find(needle)
        while start >= 0:
            found.append(Match(widget, text, start))
            start = haystack.find(needle, start + len(needle))
    return found


def marked(text: str, start: int, length: int) -> Text:
    """*text* as plain text with [start, start+length) highlighted."""
    shown = Text(text)
    shown.stylize(HIT_STYLE, start, start + length)
    return shown


class SearchBar(Horizontal):
    """The search bar above the chat; `Conversation.search()` opens it."""

    DEFAULT_CSS = """
    SearchBar { height: 1; dock: top; background: $boost; }
    SearchBar Input { width: 1fr; }
    SearchBar #search-count { width: auto; min-width: 12; color: $text-muted; padding: 0 1; }
    .-search-hit { background: $warning 30%; }
    """

    BINDINGS = [
        Binding("f3,down", "next", "Next", show=False),
        Binding("shift+f3,shift+enter,up", "previous", "Previous", show=False),
        Binding("escape", "close", "Close search", id="cave.search.close"),
    ]

    def __init__(self, chat: ChatPane, log: StepLog, on_close: Callable[[], None]) -> None:
        super().__init__(id="search")
        self.chat = chat
        self.steplog = log
        self.on_close = on_close
        self.input = Input(
            placeholder="find in the chat and the log", id="search-input", compact=True
        )
        self.count = Static("", id="search-count", markup=False)
        self.matches: list[Match] = []
        self.index = -1
        self._shown: Widget | None = None  # the widget highlighted now

    def compose(self) -> ComposeResult:
        yield self.input
        yield self.count

    @property
    def current(self) -> Match | None:
        return self.matches[self.index] if 0 <= self.index < len(self.matches) else None

    @on(Input.Changed, "#search-input")
    def _changed(self, event: Input.Changed) -> None:
        event.stop()
        self.search(event.value)

    @on(Input.Submitted, "#search-input")
    def _submitted(self, event: Input.Submitted) -> None:
        event.stop()
        self.action_next()

    def search(self, query: str) -> None:
        """Find *query* anew; the first match is shown."""
        self.matches = find(searchable(self.chat, self.steplog), query)
        self.index = 0 if self.matches else -1
        self._show()

    def action_next(self) -> None:
        self._step(1)

    def action_previous(self) -> None:
        self._step(-1)

    def _step(self, delta: int) -> None:
        if not self.matches:
            self.search(self.input.value)  # the chat or the log may have grown since
            return
        self.index = (self.index + delta) % len(self.matches)
        self._show()

    def _show(self) -> None:
        self._unmark()
        match = self.current
        query = self.input.value
        if match is None:
            self.count.update("no match" if query else "")
            return
        self.count.update(f"{self.index + 1} of {len(self.matches)}")
        widget = match.widget
        if isinstance(widget, FoldedOutput):
            widget.unfold()  # the match may be in the folded part
            widget.update(marked(widget.full, match.start, len(query)))
        elif isinstance(widget, UserMessage):
            widget.update(marked(match.text, match.start, len(query)))
        elif isinstance(widget, AgentMessage | Answer | Notice):
            widget.mark(query)  # its words, where the rendered Markdown shows them
        elif isinstance(entry := widget.parent, StepEntry) and widget is entry.code_view:
            entry.mark_code((match.start, match.start + len(query)), HIT_STYLE)
        widget.add_class(HIT_CLASS)
        self._shown = widget
        widget.scroll_visible(animate=False, immediate=True)

    def _unmark(self) -> None:
        widget, self._shown = self._shown, None
        if widget is None:
            return
        widget.remove_class(HIT_CLASS)
        if isinstance(widget, FoldedOutput):
            widget.update(Text(widget.full if widget.expanded else widget.folded_text))
        elif isinstance(widget, UserMessage):
            widget.update(Text(printable(widget.text)))
        elif isinstance(widget, AgentMessage | Answer | Notice):
            widget.mark(None)
        elif isinstance(entry := widget.parent, StepEntry) and widget is entry.code_view:
            entry.mark_code(None)

    def action_close(self) -> None:
        self._unmark()
        self.remove()
        self.on_close()
