"""The detail view's table of a frame: `textual-fastdatatable` over windows of rows.

The frame stays where it lives (in process or in the kernel); the table asks its
`WindowSource` for `PAGE` rows at a time, as Arrow, when they come into view, so a
two-million-row frame opens as fast as a small one. Keys: arrows move by cell (and scroll
by column), `s` sorts by the focused column (again: the other way), `/` searches, `n`
finds the next match. Labels and cells are text, never markup.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from itertools import chain
from typing import TYPE_CHECKING, Any, ClassVar, Literal, Protocol, TypeVar

from rich.segment import Segment
from rich.style import Style
from rich.text import Text
from textual import on
from textual._segment_tools import line_crop
from textual.app import ComposeResult
from textual.binding import Binding, BindingType
from textual.cache import LRUCache
from textual.containers import Vertical
from textual.coordinate import Coordinate
from textual.strip import Strip
from textual.widgets import Input, Static
from textual_fastdatatable.backend import DataTableBackend
from textual_fastdatatable.data_table import DataTable

from cave_tui.frontends.tui.widgets.plain_cells import (
    NULL_TEXT,
    cell_width,
    plain_cell,
    render_plain,
)
from cave_tui.printable import plain_text, printable_line
from cave_tui.runtime.shipped.frame_window import FrameWindow, SortKey

if TYPE_CHECKING:
    import pyarrow as pa

    from cave_tui.runtime.base import Runtime

PAGE = 200  # rows fetched at a time
PAGES_KEPT = 32  # pages held in the host (the rest are fetched again when seen)
AHEAD = 80  # rows from a page's edge at which the next page is fetched (two screens)
WIDTH_CAP = 40  # a column is at most this wide (longer cells end with …)
MEASURED_ROWS = 50  # rows of the first window the column widths are fitted to
LOADING = "…"

SegmentLines = list[list[Segment]]
NOWHERE = Coordinate(-2, -2)  # the cursor, for a line it is not on
# row, column, width, style, cursor, hover, in range, hover shown, update count, pseudo-classes
_RowKey = TypeVar("_RowKey", bound=tuple[Any, ...])
PlainCellKey = tuple[int, int, int, Style, bool, bool, bool, bool, int, object]


class WindowSource(Protocol):
    """Where the table's rows come from (the frame, read where it lives)."""

    async def window(self, start: int, stop: int, sort: SortKey | None) -> FrameWindow: ...

    async def find(
        self, text: str, row: int, column: int, sort: SortKey | None
    ) -> tuple[int, int] | None: ...


@dataclass(frozen=True)
class RuntimeFrame:
    """The frame bound to *name* in *runtime*."""

    runtime: Runtime
    name: str

    async def window(self, start: int, stop: int, sort: SortKey | None) -> FrameWindow:
        return await self.runtime.frame_window(self.name, start, stop, sort)

    async def find(
        self, text: str, row: int, column: int, sort: SortKey | None
    ) -> tuple[int, int] | None:
        return await self.runtime.frame_find(self.name, text, row, column, sort)


def _python_columns(table: pa.Table) -> list[list[Any]]:
    """Each column's values as Python objects (as text where Python cannot hold them)."""
    import pyarrow as pa
    import pyarrow.compute as pc

    out = []
    for column in table.columns:
        try:
            values = column.to_pylist()
        except (OverflowError, ValueError, pa.ArrowException):
            values = pc.cast(column, pa.string()).to_pylist()
        if pa.types.is_string(column.type) or pa.types.is_large_string(column.type):
            values = [v if v is None else printable_line(v) for v in values]  # data, not codes
        out.append(values)
    return out


class WindowBackend(DataTableBackend[Any]):
    """Rows in pages fetched on demand: a page not yet here shows `LOADING` and is asked
    for through *on_miss*. `rows_converted` counts the rows turned into Python values.
    Column widths fit the first `MEASURED_ROWS` rows of each window (the cell lengths of
    their text, capped at `WIDTH_CAP`; never Rich renderables measured) and only grow."""

    def __init__(self, first: FrameWindow, on_miss: Callable[[int], None]) -> None:
        self._render_markup: bool | None = None
        self.total = first.total_rows
        self.labels = list(first.labels)
        self.on_miss = on_miss
        self.pages: OrderedDict[int, list[list[Any]]] = OrderedDict()
        self.rows_converted = 0
        self.widths = [0] * len(self.labels)
        self.add(first)

    def add(self, window: FrameWindow) -> tuple[range, bool]:
        """Keep *window*'s rows, page by page (a window starts on a page boundary); returns
        the rows it holds and whether a column grew to fit them."""
        columns = _python_columns(window.table)
        rows = [list(row) for row in zip(*columns, strict=True)] if columns else []
        self.rows_converted += len(rows)
        widths = [
            width
            if width >= WIDTH_CAP
            else min(WIDTH_CAP, max([width, *map(cell_width, values[:MEASURED_ROWS])]))
            for width, values in zip(self.widths, columns, strict=True)
        ]
        grew, self.widths = widths != self.widths, widths
        for at in range(0, len(rows), PAGE):
            page = (window.start + at) // PAGE
            self.pages[page] = rows[at : at + PAGE]
            self.pages.move_to_end(page)
        while len(self.pages) > PAGES_KEPT:
            self.pages.popitem(last=False)
        return range(window.start, window.start + len(rows)), grew

    def clear(self) -> None:
        """Forget every page (the order changed)."""
        self.pages.clear()

    def has_row(self, index: int) -> bool:
        page = self.pages.get(index // PAGE)
        return page is not None and index % PAGE < len(page)

    # -- DataTableBackend --------------------------------------------------------------
    @classmethod
    def from_pydict(
        cls,
        data: Mapping[str, Sequence[Any]],
        max_rows: int | None = None,
        column_names: Sequence[str] | None = None,
    ) -> WindowBackend:
        raise NotImplementedError("a WindowBackend reads from a WindowSource")

    @property
    def source_data(self) -> Any:
        raise NotImplementedError("the frame stays where it lives")

    @property
    def source_row_count(self) -> int:
        return self.total

    @property
    def row_count(self) -> int:
        return self.total

    @property
    def columns(self) -> Sequence[str]:
        return self.labels

    @property
    def column_content_widths(self) -> Sequence[int]:
        return self.widths

    def get_row_at(self, index: int) -> Sequence[Any]:
        number, at = divmod(index, PAGE)
        page = self.pages.get(number)
        if page is None or at >= len(page):
            self.on_miss(number)
            return [LOADING] * len(self.labels)
        # Near a page's edge, the page beyond it is asked for now: it arrives while the
        # user is still on this one, so a step across the edge never waits for rows.
        if at >= PAGE - AHEAD and (number + 1) * PAGE < self.total:
            self._ahead(number + 1)
        elif at < AHEAD and number > 0:
            self._ahead(number - 1)
        return page[at]

    def _ahead(self, number: int) -> None:
        if number not in self.pages:
            self.on_miss(number)

    def get_column_at(self, index: int) -> Sequence[Any]:
        return [self.get_cell_at(row, index) for row in range(self.total)]

    def get_cell_at(self, row_index: int, column_index: int) -> Any:
        return self.get_row_at(row_index)[column_index]

    def append_column(self, label: str, default: Any | None = None) -> int:
        raise NotImplementedError("the table view is read-only")

    def append_rows(self, records: Iterable[Iterable[Any]]) -> list[int]:
        raise NotImplementedError("the table view is read-only")

    def drop_row(self, row_index: int) -> None:
        raise NotImplementedError("the table view is read-only")

    def update_cell(self, row_index: int, column_index: int, value: Any) -> None:
        raise NotImplementedError("the table view is read-only")

    def sort(self, by: list[tuple[str, Literal["ascending", "descending"]]] | str) -> None:
        raise NotImplementedError("sorted where the frame lives (FrameView.sort)")


def _drop_rows(cache: LRUCache[_RowKey, Any], rows: range) -> None:
    """Forget *cache*'s entries for *rows* (its keys start with the row)."""
    for key in [key for key in cache.keys() if key[0] in rows]:  # noqa: SIM118
        cache.discard(key)


class FrameTable(DataTable):
    """The table itself; its keys act on the `FrameView` around it."""

    BINDINGS: ClassVar[list[BindingType]] = [
        Binding("s", "sort", "Sort by column"),
        Binding("slash", "search", "Search"),
        Binding("n", "next_match", "Next match"),
    ]

    def __init__(self, view: FrameView, backend: WindowBackend, fixed_columns: int) -> None:
        self.rows = backend
        # before the library's init: its watchers clear the caches
        self._plain_cells: LRUCache[PlainCellKey, SegmentLines] = LRUCache(10_000)
        self._base_style: tuple[tuple[int, ...], Style] = ((), Style())
        self._styles_drawn: list[tuple[str, object, object]] | None = None
        self._styles_check = False
        super().__init__(
            backend=backend,
            column_labels=view.header(),
            max_column_content_width=WIDTH_CAP,
            fixed_columns=fixed_columns,
            zebra_stripes=True,
            cursor_type="cell",
            null_rep=f"[dim]{NULL_TEXT}[/]",
            render_markup=False,
            id="frame-table",
        )
        self.view = view

    def relabel(self, labels: list[str | Text]) -> None:
        """New column labels (the sort marker moved)."""
        self._column_labels = list(labels)
        self._ordered_columns = None
        self._require_update_dimensions = True
        self.rows_changed()

    def notify_style_update(self) -> None:
        """Textual applies the CSS again to every node under a class or pseudo-class that
        changed (the focus moving in, the screen opening), most often to the same styles:
        the drawn lines are dropped at the next draw only if the styles they were drawn
        with changed (the library dropped them each time: the table was drawn twice on
        open). The widget's and its ancestors' styles are in the lines' keys already."""
        super(DataTable, self).notify_style_update()  # the widget's own, not the library's
        self._styles_check = True
        self.refresh()

    def _check_styles(self) -> None:
        """Drop every drawn line if the component styles (cursor, header, zebra rows...) or
        the widget's own rules changed since the lines were drawn."""
        self._styles_check = False
        drawn: list[tuple[str, object, object]] = [
            (name, styles._base_styles._rules.copy(), styles._inline_styles._rules.copy())
            for name, styles in sorted(self._component_styles.items())
        ]
        drawn.append(("", self.styles._cache_key, None))
        if drawn != self._styles_drawn:
            if self._styles_drawn is not None:  # None: nothing drawn yet
                self._clear_caches()
            self._styles_drawn = drawn

    def rows_changed(self, rows: range | None = None) -> None:
        """*rows* arrived: render them again; None: every row changed (the order)."""
        if rows is None:
            self._update_count += 1
            self._clear_caches()
        else:  # the other rows' cells, lines and cached strips stay good
            _drop_rows(self._plain_cells, rows)
            _drop_rows(self._cell_render_cache, rows)
            _drop_rows(self._row_render_cache, rows)
            _drop_rows(self._line_cache, range(rows.start + 1, rows.stop + 1))  # y: header is 0
            self._tooltip_cache.clear()
        self.refresh()

    def _clear_caches(self) -> None:
        super()._clear_caches()
        self._plain_cells.clear()

    # Overrides `DataTable.render_line` of textual-fastdatatable 0.19.5 (its body, with
    # `line_style` for `rich_style`).
    def render_line(self, y: int) -> Strip:
        """Line *y* of the widget (the header and fixed rows stay, the rest scroll)."""
        if self._styles_check or self._styles_drawn is None:
            self._check_styles()
        scroll_x, scroll_y = self.scroll_offset
        fixed_rows_height = self.fixed_rows + (self.header_height if self.show_header else 0)
        if y >= fixed_rows_height:
            y += scroll_y
        return self._render_line(y, scroll_x, scroll_x + self.size.width, self.line_style())

    def line_style(self) -> Style:
        """The widget's `rich_style`, computed again only when its or an ancestor's styles
        changed: the DOM walks every ancestor for it, and once per line it was most of a
        scroll step's time."""
        key = tuple(node.styles._cache_key for node in self.ancestors_with_self)
        if key != self._base_style[0]:
            self._base_style = (key, self.rich_style)
        return self._base_style[1]

    # Overrides `DataTable._render_line` of textual-fastdatatable 0.19.5 (its body, with
    # one change): the cursor and the hover are part of a line's cache key only on their
    # own row, so moving the cursor draws two lines again, not every line on screen.
    def _render_line(self, y: int, x1: int, x2: int, base_style: Style) -> Strip:
        """Line *y* of the table (the header is 0), cropped to x1..x2."""
        if self.cursor_type != "cell":  # a row or column cursor spans rows: the library's way
            return super()._render_line(y, x1, x2, base_style)
        width = self.size.width
        row_index = y - 1
        if not self.is_valid_row_index(row_index) and row_index != -1:
            return Strip.blank(width, base_style)
        cursor, hover = self.cursor_coordinate, self.hover_coordinate
        cursor = cursor if cursor.row == row_index else NOWHERE
        hover = hover if hover.row == row_index else NOWHERE
        cache_key = (
            y,
            x1,
            x2,
            width,
            cursor,
            hover,
            None,  # no selection: a cell cursor selects nothing
            base_style,
            self.cursor_type,
            self._show_hover_cursor,
            self._update_count,
            self._pseudo_class_state,
        )
        cached = self._line_cache.get(cache_key)
        if cached is not None:
            return cached
        fixed, scrollable, hidden_width, fixed_width = self._render_line_in_row(
            row_index,
            0,
            x1,
            x2,
            base_style,
            cursor_location=cursor,
            hover_location=hover,
            selection_anchor_location=None,
        )
        fixed_line: list[Segment] = list(chain.from_iterable(fixed)) if fixed else []
        scrollable_line: list[Segment] = list(chain.from_iterable(scrollable))
        segments = fixed_line + line_crop(
            scrollable_line, x1 - hidden_width, x2 - hidden_width, width - fixed_width
        )
        strip = Strip(segments).adjust_cell_length(width, base_style).simplify()
        self._line_cache[cache_key] = strip
        return strip

    # Overrides `DataTable._render_cell` of textual-fastdatatable 0.19.5 (same signature
    # and result; the library's own path draws headers and values `plain_cell` declines).
    def _render_cell(
        self,
        row_index: int,
        column_index: int,
        base_style: Style,
        width: int,
        cursor: bool = False,
        hover: bool = False,
        in_range: bool = False,
    ) -> SegmentLines:
        """A body cell of plain text drawn directly (no Rich renderables), cached by row,
        column, width and style."""
        if row_index < 0 or column_index < 0:
            return super()._render_cell(
                row_index, column_index, base_style, width, cursor, hover, in_range
            )
        key: PlainCellKey = (
            row_index,
            column_index,
            width,
            base_style,
            cursor,
            hover,
            in_range,
            self._show_hover_cursor,
            self._update_count,
            self._pseudo_class_state,
        )
        lines = self._plain_cells.get(key)
        if lines is not None:
            return lines
        value = self.rows.get_cell_at(row_index, column_index)
        cell = plain_cell(value, self.ordered_columns[column_index])
        if cell is not None:
            component_style, post_style = self._get_styles_to_render_cell(
                False,
                False,
                row_index < self.fixed_rows or column_index < self.fixed_columns,
                hover,
                cursor,
                in_range,
                self.show_cursor,
                self._show_hover_cursor,
                self.cursor_type == "range",
                self.cursor_foreground_priority == "css",
                self.cursor_background_priority == "css",
            )
            meta = Style.from_meta({"row": row_index, "column": column_index})
            lines = render_plain(cell, width, base_style + meta + component_style, post_style)
        if lines is None:
            lines = super()._render_cell(
                row_index, column_index, base_style, width, cursor, hover, in_range
            )
        self._plain_cells[key] = lines
        return lines

    def action_sort(self) -> None:
        self.view.sort_by(self.cursor_column)

    def action_search(self) -> None:
        self.view.open_search()

    async def action_next_match(self) -> None:
        await self.view.find_next()


class FrameView(Vertical):
    """A frame's table, its search input and a status line."""

    DEFAULT_CSS = """
    FrameView {
        height: 1fr;
        #frame-table { height: 1fr; }
        #frame-search { display: none; }
        #frame-search.open { display: block; }
        #frame-status { color: $text-muted; height: 1; }
    }
    """

    def __init__(self, source: WindowSource, first: FrameWindow, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.source = source
        self.first = first
        self.sort: SortKey | None = None
        self.generation = 0  # bumped by each sort: pages of an older order are dropped
        self.pending: set[tuple[int, int]] = set()
        self.query_text = ""
        self.message = ""
        self.backend = WindowBackend(first, self._missing)

    def compose(self) -> ComposeResult:
        yield FrameTable(self, self.backend, self.first.index_columns)
        yield Input(
            placeholder="search the cells (Enter: next match, Esc: close)", id="frame-search"
        )
        yield Static(self.status(), id="frame-status")

    @property
    def table(self) -> FrameTable:
        return self.query_one(FrameTable)

    def header(self) -> list[str | Text]:
        """The column labels as text, the sorted one marked ▲ or ▼."""
        out: list[str | Text] = []
        for i, label in enumerate(self.backend.labels):
            text = plain_text(label, one_line=True)
            if self.sort is not None and self.sort.column == i:
                text = text + Text(" ▼" if self.sort.descending else " ▲")
            out.append(text)
        return out

    def status(self) -> Text:
        rows, columns = self.backend.total, len(self.backend.labels) - self.first.index_columns
        parts = [f"{rows:,} rows × {columns:,} columns"]
        if self.sort is not None:
            label = self.backend.labels[self.sort.column] or "index"
            way = "descending" if self.sort.descending else "ascending"
            parts.append(f"sorted by {label} ({way})")
        parts.append(self.message or "s sort · / search · n next · v summary")
        return plain_text(" · ".join(parts), one_line=True)

    def _show_status(self) -> None:
        self.query_one("#frame-status", Static).update(self.status())

    # -- rows --------------------------------------------------------------------------
    def _missing(self, page: int) -> None:
        key = (self.generation, page)
        if key in self.pending:
            return
        self.pending.add(key)
        self.run_worker(self._fetch(page, self.generation), group="frame-rows")

    async def _fetch(self, page: int, generation: int) -> None:
        try:
            window = await self.source.window(page * PAGE, (page + 1) * PAGE, self.sort)
        except Exception as exc:
            self.message = f"rows not read: {type(exc).__name__}: {exc}"
            self._show_status()
            return
        finally:
            self.pending.discard((generation, page))
        if generation != self.generation:
            return
        rows, grew = self.backend.add(window)
        self.backend.total = window.total_rows
        if grew:  # every line moves
            self.table.relabel(self.header())
        else:
            self.table.rows_changed(rows)

    # -- sort --------------------------------------------------------------------------
    def sort_by(self, column: int) -> None:
        """Sort by *column*: ascending, or descending when it is sorted ascending already."""
        if not 0 <= column < len(self.backend.labels):
            return
        descending = (
            self.sort is not None and self.sort.column == column and not self.sort.descending
        )
        self.sort = SortKey(column, descending)
        self.generation += 1
        self.backend.clear()
        self.message = ""
        table = self.table
        table.relabel(self.header())
        table.move_cursor(row=0, column=column)
        self._show_status()

    # -- search ------------------------------------------------------------------------
    def open_search(self) -> None:
        search = self.query_one("#frame-search", Input)
        search.add_class("open")
        search.focus()

    @on(Input.Submitted, "#frame-search")
    async def _search(self, event: Input.Submitted) -> None:
        event.stop()
        self.query_text = event.value
        await self.find_next()

    def close_search(self) -> bool:
        """Close the search input (True if it was open)."""
        search = self.query_one("#frame-search", Input)
        if not search.has_class("open"):
            return False
        search.remove_class("open")
        self.table.focus()
        return True

    async def find_next(self) -> None:
        """Move the cursor to the next cell holding the search text."""
        if not self.query_text:
            self.open_search()
            return
        table = self.table
        row, column = table.cursor_row, table.cursor_column
        try:
            cell = await self.source.find(self.query_text, row, column, self.sort)
        except Exception as exc:
            self.message = f"search failed: {type(exc).__name__}: {exc}"
        else:
            if cell is None:
                self.message = f"no cell holds {self.query_text!r}"
            else:
                self.message = f"found {self.query_text!r} at row {cell[0] + 1:,}"
                table.move_cursor(row=cell[0], column=cell[1], animate=False)
        self._show_status()
        self.close_search()
