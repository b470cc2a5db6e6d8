"""The detail view's table of a frame: scroll by column, sort, search, labels as text,
rows read a window at a time (a 2M-row frame converts only what is seen), and the kernel
runtime's path (rows sliced in the kernel, sent as Arrow)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
import pytest

from cave_tui.frontends.tui.screens.detail import DetailScreen
from cave_tui.frontends.tui.widgets.frame_table import AHEAD, PAGE, FrameView
from tests.frontends.tui.conftest import make_app, settle, submit, wait_for
from tests.frontends.tui.test_kernel_text import screen_text


async def open_table(pilot: Any, name: str) -> FrameView:
    app = pilot.app
    app.open_detail(name)
    await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.frame)
    await settle(pilot)
    frame = app.screen.frame
    assert isinstance(frame, FrameView)
    await wait_for(pilot, lambda: frame.backend.has_row(0))
    return frame


def first_rows(frame: FrameView, column: int, count: int) -> list[Any]:
    return [frame.backend.get_row_at(i)[column] for i in range(count)]


async def test_every_column_of_a_31_column_frame_is_reached_a_column_per_key():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        wide = {f"column_{i:02d}": np.arange(50) * i for i in range(31)}
        app.services.runtime._ns["wide"] = pd.DataFrame(wide)
        frame = await open_table(pilot, "wide")
        assert "column_30" not in screen_text(app)  # off screen at first
        await pilot.press(*["right"] * 31)
        assert frame.table.cursor_column == 31  # one column per key
        await pilot.pause()
        assert "column_30" in screen_text(app)
        assert frame.table.scroll_x > 0


async def test_sort_by_the_focused_column_stable_missing_last_both_ways():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        data = {"key": [2.0, None, 1.0, 2.0, 1.0], "tag": ["a", "b", "c", "d", "e"]}
        app.services.runtime._ns["df"] = pd.DataFrame(data)
        frame = await open_table(pilot, "df")
        await pilot.press("right")  # to "key" (column 0 is the index)
        await pilot.press("s")
        await wait_for(pilot, lambda: frame.backend.has_row(0))
        assert first_rows(frame, 2, 5) == ["c", "e", "a", "d", "b"]  # ties keep their order
        assert "key ▲" in screen_text(app)
        await pilot.press("s")
        await wait_for(pilot, lambda: frame.backend.has_row(0))
        assert first_rows(frame, 2, 5) == ["a", "d", "c", "e", "b"]  # missing still last
        assert "key ▼" in screen_text(app)


async def test_search_moves_to_the_next_matching_cell():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        city = ["Oslo", "Lima", "Paris", "Lima Peru", "Rome"]
        app.services.runtime._ns["df"] = pd.DataFrame({"n": range(5), "city": city})
        frame = await open_table(pilot, "df")
        await pilot.press("slash")
        assert frame.query_one("#frame-search").has_focus
        await pilot.press(*"lima", "enter")  # letters typed there are not the view's keys
        await wait_for(pilot, lambda: frame.table.cursor_coordinate == (1, 2))
        assert isinstance(app.screen, DetailScreen)
        await pilot.press("n")
        await wait_for(pilot, lambda: frame.table.cursor_coordinate == (3, 2))
        await pilot.press("n")  # wraps around
        await wait_for(pilot, lambda: frame.table.cursor_coordinate == (1, 2))


async def test_markup_like_labels_and_cells_are_shown_whole():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        frame_data = {"[/]": ["[b]x[/b]"], "weight [kg]": [3.5], "[red]c[/]": ["[/]"]}
        app.services.runtime._ns["df"] = pd.DataFrame(frame_data)
        await open_table(pilot, "df")
        text = screen_text(app)
        header = next(line for line in text.splitlines() if "weight [kg]" in line)
        assert "[/]" in header and "[red]c[/]" in header, text
        row = next(line for line in text.splitlines() if "[b]x[/b]" in line)
        assert "3.5" in row, text


async def test_a_two_million_row_frame_converts_only_a_window():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        big = pd.DataFrame({"a": np.arange(2_000_000), "b": np.arange(2_000_000) * 0.5})
        app.services.runtime._ns["big"] = big
        frame = await open_table(pilot, "big")
        assert frame.backend.total == 2_000_000
        assert "2,000,000 rows" in screen_text(app)
        assert frame.backend.rows_converted <= PAGE
        await pilot.press("ctrl+end")  # the last row: one more window, not the frame
        await wait_for(pilot, lambda: frame.backend.has_row(1_999_999))
        await pilot.pause()
        assert frame.backend.rows_converted <= 3 * PAGE
        assert "1999999" in screen_text(app).replace(",", "")


async def test_the_page_past_the_edge_is_fetched_before_the_cursor_reaches_it():
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.services.runtime._ns["df"] = pd.DataFrame({"n": np.arange(5 * PAGE)})
        frame = await open_table(pilot, "df")
        await pilot.pause()
        assert not frame.backend.has_row(PAGE)  # the view near the top asks for no more
        frame.table.move_cursor(row=PAGE - AHEAD + 10)  # near the edge, the next page unseen
        await wait_for(pilot, lambda: frame.backend.has_row(PAGE))  # there before it is seen
        assert frame.table.scroll_y + frame.table.size.height < PAGE
        frame.table.move_cursor(row=PAGE + 5)
        assert frame.backend.get_row_at(PAGE + 5)[1] == PAGE + 5  # no wait across the edge


async def test_the_kernel_sends_only_the_rows_asked_for_as_arrow():
    from cave_tui.runtime.kernel import IPyKernelRuntime

    runtime = IPyKernelRuntime(cell_timeout=60)
    app = make_app(runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await wait_for(pilot, lambda: app.services.ready, timeout=60)
        code = (
            "!import pandas as pd, numpy as np\n"
            "kf = pd.DataFrame({'weight [kg]': np.arange(500_000) % 7, 'id': np.arange(500_000)})"
        )
        await submit(pilot, code)
        await wait_for(pilot, lambda: not app.busy, timeout=60)
        window = await runtime.frame_window("kf", 0, 3)
        assert window.total_rows == 500_000 and window.table.num_rows == 3
        assert window.labels == ["", "weight [kg]", "id"]
        frame = await open_table(pilot, "kf")
        assert "weight [kg]" in screen_text(app)
        await pilot.press("right", "s")  # sort by weight: 0s first, ids in order
        await wait_for(pilot, lambda: frame.backend.has_row(0), timeout=30)
        assert first_rows(frame, 2, 3) == [0, 7, 14]
        assert await runtime.frame_find("kf", "499999", 0, 0) == (499_999, 0)
        await app.action_quit()


async def test_the_summary_is_computed_once_the_table_is_on_screen():
    """describe() of a sample waits for the table's first paint (computed at once, it held
    the open of a large frame back), then arrives for `v` as before."""
    from cave_tui.runtime.ipython import IPythonRuntime

    class Watched(IPythonRuntime):
        asked_with_table: list[bool] = []

        async def detail(self, name: str, *args: Any, **kwargs: Any) -> Any:
            screen = app.screen
            shown = isinstance(screen, DetailScreen) and screen.frame is not None
            self.asked_with_table.append(shown and bool(screen.frame.table.size.height))
            return await super().detail(name, *args, **kwargs)

    runtime = Watched()
    app = make_app([], runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        runtime._ns["df"] = pd.DataFrame({"a": np.arange(1000), "b": np.arange(1000) / 3})
        await open_table(pilot, "df")
        await wait_for(pilot, lambda: app.screen.detail is not None)
        assert runtime.asked_with_table == [True]
        assert app.screen.detail.describe  # the summary is there for `v`


def composed(app: Any) -> bool:
    """The detail view is the app's screen and its widgets are there."""
    return isinstance(app.screen, DetailScreen) and bool(app.screen.query("#detail-body > *"))


async def test_the_view_opens_on_the_table_not_a_loading_state(
    monkeypatch: pytest.MonkeyPatch,
):
    """The first rows are read before the view is pushed: what it mounts, so its first
    paint, is the table, never a loading state followed by a second full paint."""
    mounted: list[tuple[bool, bool]] = []
    on_mount = DetailScreen.on_mount

    def watched(screen: DetailScreen) -> None:
        loading = bool(screen.query("#detail-loading, LoadingIndicator"))
        mounted.append((loading, any(f.backend.has_row(0) for f in screen.query(FrameView))))
        on_mount(screen)

    monkeypatch.setattr(DetailScreen, "on_mount", watched)
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.services.runtime._ns["df"] = pd.DataFrame({"a": np.arange(5000)})
        app.open_detail("df")
        await wait_for(pilot, lambda: bool(mounted))
        assert mounted == [(False, True)]
        assert "5,000 rows" in str(app.screen.query_one("#detail-title").render())


async def test_rows_slower_than_the_wait_open_behind_the_loading_state(
    monkeypatch: pytest.MonkeyPatch,
):
    """Rows that take longer than `FIRST_ROWS_WAIT` do not hold the view back."""
    import asyncio

    from cave_tui.frontends.tui.screens import detail
    from cave_tui.runtime.ipython import IPythonRuntime

    monkeypatch.setattr(detail, "FIRST_ROWS_WAIT", 0)
    arrived = asyncio.Event()

    class Slow(IPythonRuntime):
        async def frame_window(self, *args: Any, **kwargs: Any) -> Any:
            await arrived.wait()
            return await super().frame_window(*args, **kwargs)

    runtime = Slow()
    app = make_app([], runtime=runtime)
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        runtime._ns["df"] = pd.DataFrame({"a": np.arange(50)})
        app.open_detail("df")
        await wait_for(pilot, lambda: composed(app))
        screen = app.screen
        assert screen.frame is None and screen.query("#detail-loading, LoadingIndicator")
        arrived.set()
        await wait_for(pilot, lambda: screen.frame is not None and screen.frame.table.size.height)
        assert "50 rows" in screen_text(app)
