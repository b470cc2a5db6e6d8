"""`/inject` of a slow file in the app: its progress is shown and the load succeeds (issue 14.3).

The loader reports progress from its worker thread; the app must only post messages from
there. The load is made slow deterministically: the progress clock advances a second per
reading and the loader waits at its first report until the test saw the progress line.
"""

from __future__ import annotations

import threading
import types

import pyarrow as pa
import pyarrow.parquet as pq

from cave_tui.dataio import load as load_module
from cave_tui.dataio import progress as progress_module
from cave_tui.frontends.tui.widgets.load_progress import LoadBar

from .conftest import chat_text, make_app, settle, wait_for


def _slow_clock() -> types.SimpleNamespace:
    """A `time` stand-in whose monotonic clock moves one second per reading."""
    ticks = {"now": 1000.0}

    def monotonic() -> float:
        ticks["now"] += 1.0
        return ticks["now"]

    return types.SimpleNamespace(monotonic=monotonic)


async def test_a_slow_inject_shows_its_progress_and_succeeds(tmp_path, monkeypatch):
    table = pa.table({"sku": list(range(4000)), "price": [i * 0.5 for i in range(4000)]})
    path = tmp_path / "prices.parquet"
    pq.write_table(table, path, row_group_size=500)  # 8 row groups: read group by group
    monkeypatch.setattr(load_module, "SMALL_FILE", 0)  # the chunked path, with progress
    monkeypatch.setattr(progress_module, "time", _slow_clock())
    released = threading.Event()
    reported = progress_module.Monitor.report

    def report_then_wait(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        reported(self, *args, **kwargs)
        assert released.wait(30), "the test never released the load"

    monkeypatch.setattr(progress_module.Monitor, "report", report_then_wait)

    def progress_lines() -> list[str]:
        return [b.text for b in app.chat.query(LoadBar) if b.text.startswith("reading prices")]

    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.prompt.text = "/inject prices.parquet as prices"
        app.prompt.action_submit()
        await wait_for(pilot, lambda: bool(progress_lines()))  # shown while it loads
        (bar,) = app.chat.query(LoadBar)  # one bar for the file, updated in place
        assert "prices.parquet" in bar.text and " rows" in bar.text
        released.set()
        await settle(pilot)
        text = chat_text(app)
        assert "corrupt" not in text
        assert "Injected `prices`" in text
        assert not app.loads.running and not app.chat.query(LoadBar)  # gone once it ended
        assert len(app.services.runtime._ns["prices"]) == 4000


async def test_a_command_printing_from_a_thread_reaches_the_chat(tmp_path):
    app = make_app()
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        worker = threading.Thread(target=app.ctx.print, args=("from a loader thread",))
        worker.start()
        worker.join()
        await wait_for(pilot, lambda: "from a loader thread" in chat_text(app))
