"""Table cells that are plain text, drawn without Rich's render pipeline.

A frame's cells arrive as strings and numbers; `textual-fastdatatable` would wrap each in
`Align`/`Padding`/`Styled` and render it through the console (most of a scroll step's
time). `plain_cell` says what a value shows, exactly as the library's `cell_formatter`
would (the same text, alignment and ellipsis), or None for a value only the library can
draw (a bool, markup-bearing dates at the calendar's ends, bytes, nested values).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from enum import Enum

from rich.cells import cell_len, set_cell_size
from rich.segment import Segment
from rich.style import Style
from textual_fastdatatable.column import CELL_X_PADDING, Column
from textual_fastdatatable.format import LINE_BREAK_PROG, display_text, measure_width

NULL_TEXT = "NA"  # what a missing value shows (dim, centred)
NULL_STYLE = Style(dim=True)
_RIGHT_ALIGNED = (int, float, Decimal, datetime, time, date, timedelta)


class Align(Enum):
    LEFT = "left"
    RIGHT = "right"
    CENTER = "center"


@dataclass(frozen=True, slots=True)
class PlainCell:
    """The one line of text a cell shows, where it sits, and its own style (None: the row's)."""

    text: str
    align: Align
    style: Style | None = None


def plain_cell(value: object, column: Column | None = None) -> PlainCell | None:
    """What *value* shows as plain text (strings literally, never markup), or None when
    it needs the library's renderer."""
    if value is None:
        return PlainCell(NULL_TEXT, Align.CENTER, NULL_STYLE)
    if isinstance(value, str):
        if LINE_BREAK_PROG.search(value) is not None:
            return None  # the library marks the cut (`…⏎`)
        return PlainCell(value, Align.LEFT)
    if isinstance(value, bool) or not isinstance(value, _RIGHT_ALIGNED):
        return None
    text = display_text(value, column, render_markup=False)
    if "[" in text:  # markup of the library's own (±∞ dates)
        return None
    return PlainCell(text, Align.RIGHT)


def cell_width(value: object) -> int:
    """Cells *value* needs in a column: its text's cell length (measured by Rich only for
    a value `plain_cell` cannot draw)."""
    cell = plain_cell(value)
    if cell is None:
        return measure_width(value, render_markup=False)
    return len(cell.text) if cell.text.isascii() else cell_len(cell.text)


def render_plain(
    cell: PlainCell, width: int, style: Style, post_style: Style
) -> list[list[Segment]] | None:
    """*cell* as the one line of segments the library draws for it in a column *width*
    cells wide (a space either side), or None when the column has no room for text."""
    room = width - CELL_X_PADDING
    if room < 1:
        return None
    text = cell.text
    length = len(text) if text.isascii() else cell_len(text)
    if length > room:  # as Rich's "ellipsis" overflow cuts it
        text = set_cell_size(text, room - 1) + "…"
        length = room
    excess = room - length
    if cell.align is Align.LEFT:
        left, right = 0, excess
    elif cell.align is Align.RIGHT:
        left, right = excess, 0
    else:
        left = excess // 2
        right = excess - left
    line_style = style + post_style
    if cell.style is None:
        return [[Segment(f"{' ' * (left + 1)}{text}{' ' * (right + 1)}", line_style)]]
    return [
        [
            Segment(" " * (left + 1), line_style),
            Segment(text, style + cell.style + post_style),
            Segment(" " * (right + 1), line_style),
        ]
    ]
