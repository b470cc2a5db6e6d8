"""The code/output log: each step's code (highlighted), its output or traceback, its duration.

Long output is folded to its head and tail (Ctrl+O unfolds the newest, Enter on a
focused one or a click unfolds that one); the log
keeps at most `MAX_ENTRIES` steps so widget count stays bounded in long sessions.
"""

from __future__ import annotations

import contextlib
from typing import TYPE_CHECKING

from rich.text import Text
from textual.binding import Binding
from textual.containers import VerticalGroup, VerticalScroll
from textual.content import Content
from textual.dom import NoScreen
from textual.message import Message
from textual.widgets import Static

from cave_tui.frontends.tui.keys import SCROLL_HINT, OrderedKeys
from cave_tui.frontends.tui.widgets.copying import COPY_BINDING, Copyable, step_label
from cave_tui.printable import plain_text, printable

if TYPE_CHECKING:
    from textual.app import ComposeResult
    from textual.widget import Widget

OUTPUT_PADDING = 2  # FoldedOutput's padding (app.tcss): what an output line loses of the log
MAX_ENTRIES = 60
FOLD_LINES = 16
LIVE_CHARS = 20_000  # a running cell's output kept for its live view (its tail)


def fold(text: str, lines: int = FOLD_LINES) -> tuple[str, int]:
    """(*text* cut to its first and last lines, number of lines hidden)."""
    rows = text.splitlines()
    if len(rows) <= lines:
        return text, 0
    half = lines // 2
    hidden = len(rows) - 2 * half
    return "\n".join(
        [*rows[:half], f"… {hidden} lines folded (Ctrl+O or click to unfold) …", *rows[-half:]]
    ), hidden


def format_duration(seconds: float | None) -> str:
    if seconds is None:
        return ""
    if seconds < 1:
        return f"{seconds * 1000:.0f} ms"
    if seconds < 60:
        return f"{seconds:.1f} s"
    return f"{int(seconds // 60)}m{int(seconds % 60):02d}s"


class FoldedOutput(Copyable, Static, can_focus=True):
    """Cell output; folded when long, unfolded on Enter or click; Ctrl+Y copies it whole."""

    BINDINGS = [Binding("enter", "toggle_fold", "Unfold"), COPY_BINDING]

    def __init__(self, text: str, kind: str = "output", owner: str = "") -> None:
        text = printable(text)  # the cell's own bytes: no escape sequence reaches the terminal
        self.full = text
        self.what = kind  # "output" or "error", for the copy note
        self.owner = owner  # "step 2": whose output, for the copy note
        self.folded_text, self.hidden = fold(text)
        self.expanded = False
        super().__init__(Text(self.folded_text), classes=f"-{kind}")

    def copy_text(self) -> str:
        return self.full

    def copy_label(self) -> str:
        return f"the {self.what} of {self.owner}" if self.owner else f"the {self.what}"

    def unfold(self) -> None:
        """Show the whole output (a search found text in its folded part)."""
        if self.hidden and not self.expanded:
            self.action_toggle_fold()

    def action_toggle_fold(self) -> None:
        if not self.hidden:
            return
        self.expanded = not self.expanded
        self.update(Text(self.full if self.expanded else self.folded_text))

    def on_click(self) -> None:
        self.action_toggle_fold()


class StepEntry(Copyable, VerticalGroup, can_focus=True):
    """One cell: header (who, step, outcome, duration), code, output; Ctrl+Y copies its code;
    Enter opens its frame result as a table (the detail view), when it has one."""

    BINDINGS = [COPY_BINDING, Binding("enter", "open_result", "Open table")]

    class OpenFrame(Message):
        """Open the frame the runtime holds as *name* in the detail view."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, step: int, agent: str | None, code: str) -> None:
        super().__init__()
        self.step = step
        self.agent = agent
        self.code = code
        self.outcome = "running"
        self.header = Static("", classes="step-header")
        self.code_view = Static(self._highlight(code), classes="step-code")
        # What came before on_mount ran (its header and code are composed by then): mounted
        # there, in order. Not `is_mounted`: Textual sets that only after on_mount *and* the
        # mounts it waits on, so an outcome arriving in that wait was set aside for good.
        self._early: list[Widget] = []
        self._placing = False  # on_mount ran: widgets are mounted at once, in order
        self.live: Static | None = None  # the output streamed while the cell runs
        self.live_text = ""
        self.live_dropped = 0  # characters streamed but no longer kept
        self.result_frame: str | None = None  # the name its frame result opens by
        self._render_header()

    def copy_text(self) -> str:
        return self.code

    def copy_label(self) -> str:
        return f"the code of {step_label(self.step, self.agent)}"

    def set_result_frame(self, name: str | None) -> None:
        """The cell's result is a frame the runtime holds as *name* (None: it is not)."""
        self.result_frame = name
        with contextlib.suppress(NoScreen):  # an entry leaving the log (a /reset) has none
            self.refresh_bindings()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        if action == "open_result":
            return self.result_frame is not None
        return True

    def action_open_result(self) -> None:
        if self.result_frame is not None:
            self.post_message(self.OpenFrame(self.result_frame))

    def mark_code(self, span: tuple[int, int] | None, style: str = "reverse") -> None:
        """Draw the code with *span* (start, end in `code`) in *style* (a search match);
        None: as it is."""
        shown = self._highlight(self.code)
        self.code_view.update(shown.stylize(style, *span) if span is not None else shown)

    @staticmethod
    def _highlight(code: str) -> Content:
        from textual.highlight import highlight  # pygments loads with the first cell

        return highlight(printable(code).rstrip("\n") or " ", language="python")

    def compose(self) -> ComposeResult:
        yield self.header
        yield self.code_view

    def on_mount(self) -> None:
        self._placing = True
        if self._early:  # a cell refused at once: its outcome goes under the header and code
            self.mount_all(self._early)
            self._early = []

    def _place(self, *widgets: Widget) -> None:
        """Put *widgets* under what the entry shows, in order (set aside until on_mount)."""
        if not widgets:
            return
        if self._placing:
            self.mount_all(widgets)
        else:
            self._early.extend(widgets)

    def _take_away(self, widget: Static) -> None:
        """Remove *widget*, placed or still set aside."""
        if widget in self._early:
            self._early.remove(widget)
        else:
            widget.remove()

    def _render_header(self, extra: str = "") -> None:
        who = "you" if self.agent == "user" else (self.agent or "agent")
        label = f"step {self.step} · {who}" if self.step else who
        self.header.update(plain_text(f"{label} · {self.outcome}{extra}"))  # names from the kernel

    def set_code(self, code: str) -> None:
        """The code changed before it ran (the user edited it)."""
        self.code = code
        self.code_view.update(self._highlight(code))
        self._render_header(" (edited)")

    def add_output(self, text: str, dropped: int = 0) -> None:
        """Output the running cell printed (streamed): its last lines are shown live."""
        text = self.live_text + printable(text)
        self.live_dropped += dropped + max(len(text) - LIVE_CHARS, 0)
        self.live_text = text[-LIVE_CHARS:]
        rows = self.live_text.splitlines()
        hidden = max(len(rows) - FOLD_LINES, 0)
        shown = "\n".join(rows[-FOLD_LINES:])
        if hidden or self.live_dropped:
            shown = f"… {hidden:,} lines above …\n{shown}" if hidden else f"…\n{shown}"
        if self.live is None:
            self.live = Static(Text(shown), classes="-output -live")
            self._place(self.live)
        else:
            self.live.update(Text(shown))

    def add_figures(self, pngs: list[bytes], saved: list[str]) -> None:
        """The figures the cell displayed, under its output (each with where it is saved)."""
        from cave_tui.frontends.tui.widgets.figure import FigureView  # Pillow: with a figure

        views: list[Widget] = []
        columns = self.size.width or self.app.size.width  # the log's, once it is laid out
        for number, png in enumerate(pngs, 1):
            where = f" · {saved[number - 1]}" if number <= len(saved) else ""
            try:
                views.append(FigureView(png, f"figure {number}{where}", columns))
            except Exception as exc:  # Pillow cannot read it: said, not drawn
                reason = f"{type(exc).__name__}: {exc}"
                views.append(Static(plain_text(f"figure {number}: not shown ({reason})")))
        self._place(*views)

    def add_note(self, text: str) -> None:
        """A policy's word on this cell (a hint, a refusal, a rewind), under its output."""
        self._place(Static(plain_text(text), classes="-output -note"))

    def finish(
        self,
        outcome: str,
        *,
        output: str = "",
        error: str = "",
        duration: str = "",
        changed: list[str] | None = None,
    ) -> None:
        self.outcome = outcome
        extra = f" · {duration}" if duration else ""
        if changed:
            shown = ", ".join(changed[:6]) + (" …" if len(changed) > 6 else "")
            extra += f" · changed: {shown}"
        self._render_header(extra)
        self.set_class(outcome != "ok", "-failed")
        widgets = []
        if output.strip() and self.live is not None:  # the whole output replaces the live tail
            self._take_away(self.live)
            self.live = None
        elif self.live is not None and self.live_text.strip():
            output = ""  # interrupted: the streamed output stays
        owner = step_label(self.step, self.agent)
        if output.strip():
            widgets.append(FoldedOutput(output.rstrip("\n"), "output", owner))
        if error.strip():
            widgets.append(FoldedOutput(error.rstrip("\n"), "error", owner))
        self._place(*widgets)


class StepLog(OrderedKeys, VerticalScroll):
    """Every cell that ran, newest at the bottom. Focused (Shift+Tab), the arrows,
    PgUp/PgDn, Home/End scroll it; text typed goes to the input (`OrderedKeys`)."""

    BINDINGS = [SCROLL_HINT]

    class WidthChanged(Message):
        """The log's outputs are now *width* columns wide (laid out, or resized)."""

        def __init__(self, width: int) -> None:
            super().__init__()
            self.width = width

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.entries: dict[tuple[str | None, int], StepEntry] = {}
        self.border_title = "Code & output"
        self.output_width = 0  # the columns an output line has, once laid out

    def on_mount(self) -> None:
        self.anchor()

    def on_resize(self) -> None:
        # The region under the border, padding and scrollbar, less the output's padding.
        width = self.scrollable_content_region.width - OUTPUT_PADDING
        if width > 0 and width != self.output_width:
            self.output_width = width
            self.post_message(self.WidthChanged(width))

    def add_code(self, step: int, agent: str | None, code: str) -> StepEntry:
        """A cell is about to run (a second call for the same step means it was edited)."""
        key = (agent, step)
        entry = self.entries.get(key)
        if entry is not None and entry.outcome == "running" and agent != "user":
            entry.set_code(code)
            return entry
        entry = StepEntry(step, agent, code)
        self.entries[key] = entry
        self.mount(entry)
        extra = len(self.children) - MAX_ENTRIES
        if extra > 0:
            self.remove_children(list(self.children[:extra]))
        return entry

    def current(self, step: int, agent: str | None) -> StepEntry | None:
        return self.entries.get((agent, step))

    def new_turn(self) -> None:
        """Steps restart at 1 each turn: forget the keys, keep the widgets."""
        self.entries.clear()

    def clear(self) -> None:
        self.entries.clear()
        self.remove_children()

    def toggle_latest(self) -> FoldedOutput | None:
        """Unfold the newest folded output (or fold it again); None when nothing is folded."""
        for output in reversed(list(self.query(FoldedOutput))):
            if output.hidden:
                output.action_toggle_fold()
                output.scroll_visible()
                return output
        return None
