"""How the frame table draws (issue 34's speed figures): plain-text cells are drawn without
Rich's console yet exactly as the library draws them; a cursor move redraws only its two
rows; a window of rows arriving redraws only those rows; widths are counted, not measured."""

from __future__ import annotations

import datetime as dt
from decimal import Decimal
from typing import Any

import numpy as np
import pandas as pd
import pytest
from rich.console import Console
from rich.segment import Segment
from textual_fastdatatable.data_table import DataTable

from cave_tui.frontends.tui.widgets.frame_table import PAGE, FrameTable, FrameView
from tests.frontends.tui.conftest import make_app, settle
from tests.frontends.tui.test_frame_table import open_table

VALUES: list[Any] = [
    "plain",
    "[/]",
    "weight [kg]",
    "[b]x[/b]",
    "a long string that cannot fit the forty cells a column may take",
    "日本語のとても長い文字列ですが列に収まりません、本当に長いです",
    "",
    None,
    3,
    -12345678901234,
    0.1234567,
    float("nan"),
    Decimal("1.50"),
    dt.date(2024, 5, 1),
    dt.datetime(2024, 5, 1, 12, 30),
    dt.timedelta(hours=5),
    True,  # the library's own renderer
]


def strip_of(lines: list[list[Segment]]) -> list[tuple[str, Any]]:
    """The cell's characters with their styles, however the segments are split."""
    return [(char, seg.style) for line in lines for seg in line for char in seg.text]


def counting(monkeypatch: pytest.MonkeyPatch, cls: type, name: str) -> list[int]:
    calls: list[int] = []
    original = getattr(cls, name)

    def counted(self: Any, *args: Any, **kwargs: Any) -> Any:
        calls.append(1)
        return original(self, *args, **kwargs)

    monkeypatch.setattr(cls, name, counted)
    return calls


async def open_numbers(app: Any, pilot: Any, *, drawn: bool = False) -> FrameTable:
    """The table view of a 1000 x 30 float frame bound as `df`, open (*drawn*: its lines
    on screen drawn once)."""
    data = np.arange(1000 * 30, dtype=np.float64).reshape(1000, 30)
    app.services.runtime._ns["df"] = pd.DataFrame(data, columns=[f"c{i}" for i in range(30)])
    frame = await open_table(pilot, "df")
    table: FrameTable = frame.table
    for y in range(table.size.height if drawn else 0):
        table.render_line(y)
    return table


async def test_plain_cells_draw_as_the_library_does_without_the_console(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.services.runtime._ns["df"] = pd.DataFrame({"v": pd.Series(VALUES, dtype=object)})
        frame = await open_table(pilot, "df")
        table = frame.table
        style = table.rich_style
        rendered = counting(monkeypatch, Console, "render_lines")
        for row, value in enumerate(VALUES):
            for width in (3, 8, table.ordered_columns[1].render_width):
                for cursor in (False, True):
                    ours = table._render_cell(row, 1, style, width, cursor=cursor)
                    table._cell_render_cache.clear()  # the library's (keyed without width)
                    before = len(rendered)
                    library = DataTable._render_cell(table, row, 1, style, width, cursor=cursor)
                    assert len(rendered) > before or isinstance(value, bool)
                    assert strip_of(ours) == strip_of(library), (value, width, cursor)
        # only the bool went through Rich's console for our cells
        plain = [v for v in VALUES if not isinstance(v, bool)]
        table._clear_caches()
        rendered.clear()
        for row in range(len(plain)):
            table._render_cell(row, 1, style, 12)
        assert rendered == []


async def test_a_cursor_move_redraws_only_its_two_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = await open_numbers(app, pilot, drawn=True)
        rows = counting(monkeypatch, FrameTable, "_render_line_in_row")
        table.action_cursor_down()
        for y in range(table.size.height):
            table.render_line(y)
        assert len(rows) == 2  # the row the cursor left and the one it reached
        rows.clear()
        table.action_cursor_right()
        for y in range(table.size.height):
            table.render_line(y)
        assert len(rows) == 1  # the cursor's row


async def test_a_window_arriving_redraws_only_its_rows(monkeypatch: pytest.MonkeyPatch) -> None:
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        numbers = np.arange(100, 100 + 10 * PAGE)  # as wide at row 600 as at row 0
        app.services.runtime._ns["df"] = pd.DataFrame({"a": numbers}, index=numbers)
        frame = await open_table(pilot, "df")
        table = frame.table
        for y in range(table.size.height):
            table.render_line(y)
        cells = counting(monkeypatch, FrameView, "_missing")  # nothing on screen is missing
        lines = counting(monkeypatch, FrameTable, "_render_line_in_row")
        await frame._fetch(3, frame.generation)  # rows 600-799 arrive (off screen)
        assert frame.backend.has_row(3 * PAGE)
        for y in range(table.size.height):
            table.render_line(y)
        assert lines == [] and cells == []
        table.move_cursor(row=3 * PAGE + 5)  # they show what arrived
        await pilot.pause()
        assert str(100 + 3 * PAGE + 5) in "".join(
            s.text for y in range(table.size.height) for s in table.render_line(y)
        )


async def test_widths_are_counted_from_the_text_not_measured(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        wide = {f"c{i}": [f"{'x' * (i % 7 + 1)}{j}" for j in range(PAGE)] for i in range(60)}
        app.services.runtime._ns["df"] = pd.DataFrame(wide)
        measured = counting(monkeypatch, Console, "measure")
        frame = await open_table(pilot, "df")
        assert len(measured) < 200  # the labels at most: 60 columns x 50 rows measured 3,000
        assert frame.backend.widths[1:4] == [3, 4, 5]  # "x49", "xx49", "xxx49"


async def test_the_lines_style_is_computed_once_not_per_line(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`rich_style` walks every ancestor: the table computes it once per style change (it
    was most of a scroll step's time, once per line), and an ancestor's change is seen."""
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = await open_numbers(app, pilot, drawn=True)
        computed: list[int] = []
        rich_style = FrameTable.rich_style

        def counted(self: FrameTable) -> Any:
            computed.append(1)
            return rich_style.fget(self)  # type: ignore[attr-defined]

        monkeypatch.setattr(FrameTable, "rich_style", property(counted))
        table.action_page_down()
        for y in range(table.size.height):
            table.render_line(y)
        assert computed == []
        before = table.line_style()
        app.screen.query_one("#detail-box").styles.background = "red"  # an ancestor's
        assert table.line_style() == rich_style.fget(table) != before  # type: ignore[attr-defined]


async def test_styles_applied_again_unchanged_do_not_redraw_the_table(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Textual applies the CSS again under every class change (the focus, the screen
    opening): the same styles keep the drawn lines (dropped each time, the table was drawn
    twice on open); a theme that changes the cursor's colour draws it again."""
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        table = await open_numbers(app, pilot)
        app.update_styles(app.screen)
        await pilot.pause()
        before = [table.render_line(y) for y in range(table.size.height)]
        rows = counting(monkeypatch, FrameTable, "_render_line_in_row")
        app.update_styles(app.screen)  # the same CSS, applied again
        await pilot.pause()
        assert [table.render_line(y) for y in range(table.size.height)] == before
        assert rows == []
        app.theme = "textual-light"
        await pilot.pause()
        after = [table.render_line(y) for y in range(table.size.height)]
        assert rows and after != before
