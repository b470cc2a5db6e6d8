"""A load's progress bar (issue 34, item 4): `/inject` of a slow file shows a progress bar
with what is done (a snapshot mid-load), Esc or Ctrl+C cancels it and the namespace is left
as it was. The load is slowed by a reader the test controls: it stops after its third
report until the test releases it (or the load is cancelled)."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cave_tui.dataio import load as load_module
from cave_tui.dataio import progress as progress_module
from cave_tui.frontends.tui.widgets.load_progress import LoadBar

from .conftest import chat_text, settle, wait_for
from .test_snapshots import SIZES
from .test_snapshots import app as steady_app

HELD_AT = 3  # the report the reader stops at


@pytest.fixture
def slow_parquet(tmp_path, monkeypatch) -> threading.Event:
    """prices.parquet (8 row groups) in the working folder, read slowly: the reader stops
    at its third report until the returned event is set, or the load is cancelled."""
    table = pa.table({"sku": list(range(4000)), "price": [i * 0.5 for i in range(4000)]})
    pq.write_table(table, tmp_path / "prices.parquet", row_group_size=500)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(load_module, "SMALL_FILE", 0)  # the chunked path, with progress
    released = threading.Event()
    reported = progress_module.Monitor.report
    count = {"n": 0}

    def report_then_wait(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        reported(self, *args, **kwargs)
        count["n"] += 1
        deadline = time.monotonic() + 30
        while count["n"] >= HELD_AT and not released.is_set() and time.monotonic() < deadline:
            self.check()  # a cancel stops it here (LoadCancelled)
            time.sleep(0.01)

    monkeypatch.setattr(progress_module.Monitor, "report", report_then_wait)
    return released


def _held(app) -> bool:
    """A bar is drawn, all its parts mounted, and the load holds past its first report."""
    bars = list(app.chat.query(LoadBar))
    return bool(bars) and bool(bars[0].query(".load-hint")) and bars[0].bar.progress > 0


@pytest.mark.parametrize("size", SIZES)
def test_a_progress_bar_mid_load(snap_compare, slow_parquet, size):
    async def mid_load(pilot):
        app = pilot.app
        await settle(pilot, rounds=1)
        app.prompt.text = "/inject prices.parquet as prices"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: _held(app))
        await pilot.pause()

    try:
        assert snap_compare(steady_app([]), terminal_size=size, run_before=mid_load)
    finally:
        slow_parquet.set()


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_esc_or_ctrl_c_cancels_a_load_and_the_namespace_is_unchanged(slow_parquet, key):
    app = steady_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.services.runtime._ns["kept"] = 1
        app.prompt.text = "/inject prices.parquet as prices"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: _held(app))
        (bar,) = app.chat.query(LoadBar)
        assert "reading prices.parquet" in bar.text and " rows" in bar.text
        assert "Esc or Ctrl+C cancels" in str(bar.query_one(".load-hint").render())
        assert "Cancel" in str(app.query_one("#keys").render())  # the key bar says how
        await pilot.press(key)
        await wait_for(pilot, lambda: "was not injected" in chat_text(app))
        await settle(pilot)
        assert "prices" not in app.services.runtime._ns and app.services.runtime._ns["kept"] == 1
        assert not app.chat.query(LoadBar) and not app.loads.running
        assert app.is_running  # one Ctrl+C cancels the load, it does not quit
        slow_parquet.set()


async def test_a_retrieve_shows_its_progress_and_esc_cancels_it_with_nothing_written(
    slow_parquet, tmp_path, monkeypatch
):
    import pandas as pd

    from cave_tui.dataio import save as save_module

    monkeypatch.setattr(save_module, "WRITE_CHUNK_ROWS", 500)
    app = steady_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.services.runtime._ns["big"] = pd.DataFrame({"a": range(4_000)})
        app.prompt.text = "/retrieve big"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: _held(app))
        (bar,) = app.chat.query(LoadBar)
        assert bar.text.startswith("writing big.parquet") and "1,000 rows" in bar.text
        await pilot.press("escape")
        await wait_for(pilot, lambda: "Cancelled: big was not written" in chat_text(app))
        await settle(pilot)
        assert not app.chat.query(LoadBar)
        folder = tmp_path / "retrieved"
        await wait_for(pilot, lambda: not list(folder.iterdir()))  # not even a temporary file
        slow_parquet.set()
