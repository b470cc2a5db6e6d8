"""The inspector: one row per user variable, live, filterable; Enter opens the detail view.

`VarTable` is a line-API widget: it renders only the rows on screen, so replacing
10,000 rows costs one list filter, not 10,000 widgets. Rows changed by the last
cell are highlighted.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from rich.segment import Segment
from rich.style import Style
from textual import on
from textual.binding import Binding
from textual.containers import Vertical
from textual.geometry import Size
from textual.message import Message
from textual.reactive import reactive
from textual.scroll_view import ScrollView
from textual.strip import Strip
from textual.widgets import Input, Static

from cave_tui.app.detail import human_bytes
from cave_tui.frontends.tui.keys import OrderedKeys, move_focus
from cave_tui.printable import printable_line
from cave_tui.runtime.shipped.summary import VarInfo

if TYPE_CHECKING:
    from textual import events
    from textual.app import ComposeResult


def _fit(text: str, width: int) -> str:
    if width <= 0:
        return ""
    text = text.replace("\n", " ")
    if len(text) > width:
        return text[: max(width - 1, 0)] + "…"
    return text.ljust(width)


@dataclass
class Columns:
    name: int
    type: int
    shape: int
    size: int
    preview: int


def layout_columns(width: int, rows: list[VarInfo]) -> Columns:
    """Column widths for *width* cells: name, type, shape and size first, preview gets the rest."""
    longest = max((len(r.name) for r in rows[:500]), default=4)
    name = max(4, min(longest, 16))
    type_ = 10
    shape = 9
    size = 8
    rest = width - (name + type_ + shape + size + 4)
    if rest < 8:  # narrow: drop the preview, then the size
        rest = 0
        if name + type_ + shape + size + 3 > width:
            size = 0
    return Columns(name, type_, shape, size, max(rest, 0))


def cells(row: VarInfo) -> tuple[str, str, str, str, str]:
    """The row's name, type, shape, size and preview, each one printable line (the kernel
    chose them: an escape sequence in a name or a repr never reaches the terminal)."""
    if row.kind == "variable":
        size = human_bytes(row.size_bytes)
        preview = row.preview
        if row.columns and row.type_name == "DataFrame":
            preview = row.column_names_text()
    else:
        size = ""
        preview = row.signature or row.preview
    name, type_name, shape = row.name, row.type_name, row.shape_text()
    return (
        printable_line(name),
        printable_line(type_name),
        printable_line(shape),
        size,
        printable_line(preview),
    )


class FilterInput(OrderedKeys, Input):
    """The inspector's filter box."""


class VarTable(OrderedKeys, ScrollView, can_focus=True):
    """Virtual table of `VarInfo` rows (renders only what is visible)."""

    COMPONENT_CLASSES = {
        "vartable--cursor",
        "vartable--changed",
        "vartable--dim",
        "vartable--name",
    }
    BINDINGS = [
        Binding("enter", "select", "Details", show=True),
        Binding("up", "cursor(-1)", "Up", show=False),
        Binding("down", "cursor(1)", "Down", show=False),
        Binding("pageup", "page(-1)", "Page up", show=False),
        Binding("pagedown", "page(1)", "Page down", show=False),
        Binding("home", "jump(0)", "First", show=False),
        Binding("end", "jump(-1)", "Last", show=False),
    ]

    cursor = reactive(0, layout=False)

    class Selected(Message):
        """Enter (or a second click) on a row."""

        def __init__(self, name: str) -> None:
            super().__init__()
            self.name = name

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.rows: list[VarInfo] = []
        self.shown: list[VarInfo] = []
        self.changed: set[str] = set()
        self.filter_text = ""
        self._columns = Columns(4, 10, 10, 8, 0)

    # -- data ---------------------------------------------------------------------------
    def set_rows(self, rows: list[VarInfo], changed: set[str] | None = None) -> None:
        """Replace every row; cost is one pass over *rows*, whatever their number."""
        selected = self.selected_name
        self.rows = rows
        if changed is not None:
            self.changed = changed
        self._apply_filter(keep=selected)

    def set_filter(self, text: str) -> None:
        self.filter_text = text.strip().lower()
        self._apply_filter(keep=self.selected_name)

    def _apply_filter(self, keep: str | None = None) -> None:
        needle = self.filter_text
        self.shown = [r for r in self.rows if needle in r.name.lower()] if needle else self.rows
        self._columns = layout_columns(self.size.width or 60, self.shown)
        self.virtual_size = Size(self.size.width or 60, len(self.shown))
        index = 0
        if keep is not None:
            for i, row in enumerate(self.shown):
                if row.name == keep:
                    index = i
                    break
        self.cursor = min(index, max(len(self.shown) - 1, 0))
        self.refresh()

    @property
    def selected_name(self) -> str | None:
        if 0 <= self.cursor < len(self.shown):
            return self.shown[self.cursor].name
        return None

    # -- rendering ------------------------------------------------------------------------
    def on_resize(self) -> None:
        self._columns = layout_columns(self.size.width, self.shown)
        self.virtual_size = Size(self.size.width, len(self.shown))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        index = self.scroll_offset.y + y
        base = self.rich_style
        if index >= len(self.shown):
            return Strip.blank(width, base)
        row = self.shown[index]
        c = self._columns
        name, type_name, shape, size, preview = cells(row)
        dim = self.get_component_rich_style("vartable--dim", partial=True)
        name_style = self.get_component_rich_style("vartable--name", partial=True)
        parts = [
            Segment(_fit(name, c.name) + " ", name_style),
            Segment(_fit(type_name, c.type) + " ", dim),
            Segment(_fit(shape, c.shape) + " ", Style()),
        ]
        if c.size:
            parts.append(Segment(_fit(size, c.size).rjust(c.size) + " ", dim))
        if c.preview:
            parts.append(Segment(_fit(preview, c.preview), dim))
        line_style = base
        if row.name in self.changed:
            line_style = line_style + self.get_component_rich_style("vartable--changed")
        if index == self.cursor and self.has_focus:
            line_style = line_style + self.get_component_rich_style("vartable--cursor")
        strip = Strip(parts).apply_style(line_style)
        return strip.adjust_cell_length(width, line_style)

    def watch_cursor(self, old: int, new: int) -> None:
        self.refresh()
        self.scroll_to_region_of(new)

    def scroll_to_region_of(self, index: int) -> None:
        height = self.scrollable_content_region.height or self.size.height
        top = self.scroll_offset.y
        if index < top:
            self.scroll_to(y=index, animate=False)
        elif height and index >= top + height:
            self.scroll_to(y=index - height + 1, animate=False)

    def on_focus(self) -> None:
        self.refresh()

    def on_blur(self) -> None:
        self.refresh()

    # -- actions -----------------------------------------------------------------------------
    def action_cursor(self, delta: int) -> None:
        if self.shown:
            self.cursor = max(0, min(self.cursor + delta, len(self.shown) - 1))

    def action_page(self, direction: int) -> None:
        self.action_cursor(direction * max(self.size.height - 1, 1))

    def action_jump(self, index: int) -> None:
        if self.shown:
            self.cursor = index if index >= 0 else len(self.shown) - 1

    def action_select(self) -> None:
        name = self.selected_name
        if name is not None:
            self.post_message(self.Selected(name))

    def on_click(self, event: events.Click) -> None:
        index = self.scroll_offset.y + event.y
        if 0 <= index < len(self.shown):
            if index == self.cursor and self.has_focus:
                self.action_select()
            self.cursor = index


class Inspector(Vertical):
    """Filter box, column header and the variable table."""

    BINDINGS = [Binding("ctrl+f", "focus_filter", "Filter", show=False)]

    def __init__(self, *, id: str | None = None) -> None:
        super().__init__(id=id)
        self.filter_input = FilterInput(
            placeholder="filter names…", id="inspector-filter", compact=True
        )
        self.header = Static("", id="inspector-header", markup=False)
        self.table = VarTable(id="inspector-table")
        self.border_title = "Namespace"

    def compose(self) -> ComposeResult:
        yield self.filter_input
        yield self.header
        yield self.table

    def on_mount(self) -> None:
        self._render_header()

    def on_resize(self) -> None:
        self._render_header()

    def _render_header(self) -> None:
        c = layout_columns(self.table.size.width or self.size.width, self.table.shown)
        text = _fit("name", c.name) + " " + _fit("type", c.type) + " " + _fit("shape", c.shape)
        if c.size:
            text += " " + "size".rjust(c.size)
        if c.preview:
            text += " " + "preview"
        self.header.update(text)

    def set_rows(self, rows: list[VarInfo], changed: set[str] | None = None) -> None:
        self.table.set_rows(rows, changed)
        self.border_title = f"Namespace ({len(rows):,})"
        self._render_header()

    @on(Input.Changed, "#inspector-filter")
    def _filter(self, event: Input.Changed) -> None:
        event.stop()
        self.table.set_filter(event.value)
        shown = len(self.table.shown)
        total = len(self.table.rows)
        self.border_title = (
            f"Namespace ({shown:,} of {total:,})" if shown != total else f"Namespace ({total:,})"
        )

    @on(Input.Submitted, "#inspector-filter")
    def _filter_done(self, event: Input.Submitted) -> None:
        event.stop()
        move_focus(self.table)

    def action_focus_filter(self) -> None:
        move_focus(self.filter_input)  # at once: the keys typed next belong to the filter
