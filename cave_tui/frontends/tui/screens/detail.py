"""The detail view of one variable: a frame as a table (`FrameView`: scroll, sort, search,
rows read a window at a time where the frame lives) with its dtypes and describe() a key
away (`v`), or a bounded repr of anything else.

A frame's first rows are read before the view opens (`DetailScreen.opened`), so its first
paint is the table, not a loading state and then a second full paint. The detail is
computed in a worker with bounded cost (see `cave_tui.app.detail`); the screen posts itself
a message when it is ready. Actions: insert the name into the input, retrieve the object to
a file, delete it.
"""

from __future__ import annotations

import asyncio
from typing import TYPE_CHECKING

from textual import on, work
from textual.app import ComposeResult
from textual.binding import Binding
from textual.containers import Horizontal, Vertical, VerticalScroll
from textual.message import Message
from textual.widgets import Button, DataTable, Input, LoadingIndicator, Static

from cave_tui.app.detail import Detail, human_bytes
from cave_tui.frontends.tui.screens.base import CaveModal
from cave_tui.frontends.tui.widgets.frame_table import PAGE, FrameView, RuntimeFrame
from cave_tui.runtime.shipped.frame_window import FrameWindow, NotATable

if TYPE_CHECKING:
    from rich.text import Text
    from textual.widget import Widget

    from cave_tui.runtime.base import Runtime
from cave_tui.printable import plain_text

FIRST_ROWS_WAIT = 0.3  # s: the longest the view waits for a frame's first rows to open on them
SUMMARY_PENDING = "computing dtypes and describe()…"


class DetailScreen(CaveModal[tuple[str, str] | None]):
    """Dismisses with (action, name): action is "insert", "retrieve" or "delete"; or None."""

    DEFAULT_CSS = """
    DetailScreen {
        #detail-box { height: 90%; }
        #detail-body { height: 1fr; }
        #detail-body.frame { display: none; }
        #detail-box.summary #detail-body.frame { display: block; }
        #detail-box.summary FrameView { display: none; }
        #detail-body DataTable { height: auto; max-height: 24; }
        .detail-heading { margin: 1 0 0 0; color: $text-accent; text-style: bold; }
        .detail-note { color: $text-muted; text-style: italic; }
        .detail-error { color: $text-error; }
    }
    """

    BINDINGS = [
        # Priority (as in ConfirmScreen): keys typed after Esc reach the input, not `d`.
        Binding("i", "act('insert')", "Insert name", priority=True),
        Binding("r", "act('retrieve')", "Retrieve to file", priority=True),
        Binding("d", "act('delete')", "Delete", priority=True),
        Binding("v", "summary", "Table / summary", priority=True),
        Binding("escape", "close", "Close", priority=True),
        Binding("q", "quit_view", "Close", priority=True),
    ]

    class Ready(Message):
        def __init__(self, detail: Detail | None, error: str = "") -> None:
            super().__init__()
            self.detail = detail
            self.error = error

    class TableReady(Message):
        def __init__(self, window: FrameWindow) -> None:
            super().__init__()
            self.window = window

    def __init__(
        self,
        name: str,
        runtime: Runtime,
        *,
        animate: bool = True,
        first: asyncio.Future[FrameWindow] | None = None,
    ) -> None:
        """*first*: the read of the frame's first rows, if started already (`opened`): done
        and a table, the view opens on it; otherwise the view's loading state awaits it."""
        super().__init__()
        self.var_name = name
        self.runtime = runtime
        self.animate_ = animate
        self.first = first
        self.detail: Detail | None = None
        self.frame: FrameView | None = None
        window = _window_read(first)
        if window is not None:
            self.frame = self._frame_view(window)

    @classmethod
    async def opened(cls, name: str, runtime: Runtime, *, animate: bool = True) -> DetailScreen:
        """The view of *name*, its first rows read first when they come within
        `FIRST_ROWS_WAIT` (a slower read goes on in the view, behind its loading state)."""
        first = asyncio.ensure_future(runtime.frame_window(name, 0, PAGE))
        try:
            await asyncio.wait({first}, timeout=FIRST_ROWS_WAIT)
        except asyncio.CancelledError:  # another open replaced this one
            first.cancel()
            raise
        return cls(name, runtime, animate=animate, first=first)

    def _frame_view(self, window: FrameWindow) -> FrameView:
        return FrameView(RuntimeFrame(self.runtime, self.var_name), window, id="detail-table")

    def _frame_title(self, window: FrameWindow) -> Text:
        columns = len(window.labels) - window.index_columns
        title = f"{self.var_name} · {window.total_rows:,} rows × {columns:,} columns"
        return plain_text(title, one_line=True)

    def compose(self) -> ComposeResult:
        frame = self.frame
        with Vertical(id="detail-box", classes="modal-box"):
            if frame is None:
                title = plain_text(self.var_name, one_line=True)
            else:
                title = self._frame_title(frame.first)
            yield Static(title, id="detail-title", classes="modal-title")
            with VerticalScroll(id="detail-body", classes="frame" if frame else ""):
                if frame is not None:
                    yield Static(SUMMARY_PENDING, classes="detail-note")
                elif self.animate_:
                    yield LoadingIndicator()
                else:
                    yield Static("loading…", id="detail-loading")
            if frame is not None:
                yield frame
            with Horizontal(classes="modal-buttons"):
                yield Button("Insert name (i)", id="insert", variant="primary", compact=True)
                yield Button("Retrieve to file (r)", id="retrieve", compact=True)
                yield Button("Delete (d)", id="delete", variant="error", compact=True)
                yield Button("Close (Esc)", id="close", compact=True)

    def on_mount(self) -> None:
        if self.frame is None:
            self.load()
        else:
            self.frame.table.focus()
            self.call_after_refresh(self.load_summary)

    @work(exclusive=True, group="detail")
    async def load(self) -> None:
        """A frame's first rows (the table opens on them; its summary is computed once the
        table is on screen: `load_summary`), or the detail of anything else."""
        try:
            if self.first is not None:
                window = await self.first
            else:
                window = await self.runtime.frame_window(self.var_name, 0, PAGE)
        except NotATable:
            pass
        except KeyError as exc:
            self.post_message(self.Ready(None, str(exc).strip("'\"")))
            return
        except Exception as exc:
            self.post_message(self.Ready(None, f"{type(exc).__name__}: {exc}"))
            return
        else:
            self.post_message(self.TableReady(window))
            return
        await self._summarise()

    @work(exclusive=True, group="detail-summary")
    async def load_summary(self) -> None:
        """The frame's summary (dtypes, describe() of a sample), after the table's first
        paint: computed at once, it held the open back (in process, it shares the GIL)."""
        await self._summarise()

    async def _summarise(self) -> None:
        try:
            detail = await self.runtime.detail(self.var_name)
        except KeyError as exc:
            self.post_message(self.Ready(None, str(exc).strip("'\"")))
            return
        except Exception as exc:
            self.post_message(self.Ready(None, f"{type(exc).__name__}: {exc}"))
            return
        self.post_message(self.Ready(detail))

    async def on_detail_screen_table_ready(self, message: TableReady) -> None:
        window = message.window
        body = self.query_one("#detail-body", VerticalScroll)
        await body.remove_children()
        body.add_class("frame")
        self.query_one("#detail-title", Static).update(self._frame_title(window))
        body.mount(Static(SUMMARY_PENDING, classes="detail-note"))
        self.frame = self._frame_view(window)
        await self.query_one("#detail-box").mount(self.frame, after=body)
        self.frame.table.focus()
        self.call_after_refresh(self.load_summary)

    async def on_detail_screen_ready(self, message: Ready) -> None:
        body = self.query_one("#detail-body", VerticalScroll)
        await body.remove_children()
        if message.detail is None:
            await body.mount(Static(plain_text(message.error), classes="detail-error"))
            return
        detail = self.detail = message.detail
        size = f" · {human_bytes(detail.size_bytes)}" if detail.size_bytes is not None else ""
        title = f"{detail.name} · {detail.type_name} {detail.shape}{size}".replace("  ", " ")
        self.query_one("#detail-title", Static).update(plain_text(title, one_line=True))
        widgets: list[Widget] = []
        if detail.is_frame:
            if self.frame is None:  # no table view (a runtime that cannot window it)
                widgets.append(Static("head", classes="detail-heading"))
                widgets.append(self._table(["", *detail.columns], detail.head, "detail-head"))
            dtypes = "  ".join(f"{c}: {t}" for c, t in detail.dtypes)
            widgets.append(Static("dtypes", classes="detail-heading"))
            widgets.append(Static(plain_text(dtypes), id="detail-dtypes"))
            if detail.describe:
                widgets.append(Static("describe()", classes="detail-heading"))
                widgets.append(
                    self._table(["", *detail.describe_columns], detail.describe, "detail-describe")
                )
        else:
            widgets.append(Static(plain_text(detail.text), id="detail-text"))
        for note in detail.notes:
            widgets.append(Static(plain_text(note), classes="detail-note"))
        await body.mount_all(widgets)

    @staticmethod
    def _table(header: list[str], rows: list[list[str]], id: str) -> DataTable:
        """A table of the kernel's labels and cells, each a `Text` (a str would be read as
        markup: a column named `[/]` would crash the app, `weight [kg]` lose its unit)."""
        table: DataTable = DataTable(id=id, zebra_stripes=True, cursor_type="none")
        table.add_columns(*(plain_text(label, one_line=True) for label in header))
        table.add_rows([[plain_text(cell, one_line=True) for cell in row] for row in rows])
        return table

    @on(Button.Pressed)
    def _pressed(self, event: Button.Pressed) -> None:
        if event.button.id == "close":
            self.action_close()
        else:
            self.action_act(event.button.id or "")

    def action_act(self, action: str) -> None:
        self.dismiss((action, self.var_name))

    def action_summary(self) -> None:
        """Switch between a frame's table and its summary (dtypes, describe())."""
        if self.frame is not None:
            box = self.query_one("#detail-box")
            box.toggle_class("summary")
            if not box.has_class("summary"):
                self.frame.table.focus()

    def check_action(self, action: str, parameters: tuple[object, ...]) -> bool | None:
        """While the table's search input has the focus, letters are typing."""
        typing = isinstance(self.focused, Input)
        return not (typing and action in ("act", "summary", "quit_view"))

    def action_quit_view(self) -> None:
        self.dismiss(None)

    def action_close(self) -> None:
        if self.frame is not None and self.frame.close_search():
            return
        self.dismiss(None)


def _window_read(first: asyncio.Future[FrameWindow] | None) -> FrameWindow | None:
    """*first*'s rows if it is done and read a table (its failure is the loading state's to
    report: `DetailScreen.load` awaits it)."""
    if first is None or not first.done() or first.cancelled() or first.exception() is not None:
        return None
    return first.result()
