"""Issue 34 leftovers, item 2: a cell whose result is a frame opens it as a table from its
log entry (Enter on the focused entry; the key bar says so): a result bound to a name
opens by that name, any other is kept by the runtime as `_resultN`."""

from __future__ import annotations

from typing import Any

from cave_tui.frontends.tui.screens.detail import DetailScreen
from cave_tui.frontends.tui.widgets.frame_table import FrameView
from cave_tui.frontends.tui.widgets.keybar import KeyBar
from cave_tui.frontends.tui.widgets.steplog import StepEntry
from tests.frontends.tui.conftest import make_app, settle, submit, wait_for

MAKE = (
    "```python\nimport pandas as pd\n"
    "sales = pd.DataFrame({'region': ['north', 'south'] * 40, 'amount': range(80)})\n"
    "sales.head(50)\n```"
)


async def open_from_entry(pilot: Any, entry: StepEntry) -> FrameView:
    app = pilot.app
    entry.focus()
    await pilot.pause()
    assert "Open table" in str(app.query_one(KeyBar).describe())
    await pilot.press("enter")
    await wait_for(pilot, lambda: isinstance(app.screen, DetailScreen) and app.screen.frame)
    frame = app.screen.frame
    assert isinstance(frame, FrameView)
    await wait_for(pilot, lambda: frame.backend.has_row(0))
    return frame


async def test_a_frame_result_opens_as_a_table_from_its_log_entry() -> None:
    app = make_app([MAKE, "The first 50 rows."])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, "show me the first rows")
        await wait_for(pilot, lambda: any(e.outcome == "ok" for e in app.steplog.entries.values()))
        (entry,) = app.steplog.entries.values()
        assert entry.result_frame == "_result1"  # not bound to a name: kept by the runtime
        frame = await open_from_entry(pilot, entry)
        assert frame.backend.row_count == 50
        assert frame.backend.get_row_at(1)[1] == "south"
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, DetailScreen))

        # A `!` cell whose value is a bound frame opens by its name.
        await submit(pilot, "!sales")
        user_entry = app.steplog.current(0, "user")
        assert user_entry is not None
        await wait_for(pilot, lambda: user_entry.outcome == "ok")
        assert user_entry.result_frame == "sales"
        frame = await open_from_entry(pilot, user_entry)
        assert frame.backend.row_count == 80

        # Any other value: no table to open, and the key bar does not offer one.
        await pilot.press("escape")
        await wait_for(pilot, lambda: not isinstance(app.screen, DetailScreen))
        await submit(pilot, "!len(sales)")
        other = app.steplog.current(0, "user")
        assert other is not None and other is not user_entry
        await wait_for(pilot, lambda: other.outcome == "ok")
        assert other.result_frame is None
        other.focus()
        await pilot.pause()
        assert "Open table" not in str(app.query_one(KeyBar).describe())
        await pilot.press("enter")
        await pilot.pause()
        assert not isinstance(app.screen, DetailScreen)
