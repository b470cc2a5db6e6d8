"""Issue 34 leftovers, item 3: the loads of the app's start (`--resume`, `--load`,
`--inject`) show "Esc or Ctrl+C cancels", and Esc or Ctrl+C does cancel them: what was
loaded whole stays, the file under way binds nothing, the app keeps running (the session
is recorded) and says what was not loaded. The second file's read is held by the test."""

from __future__ import annotations

import threading
import time

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from cave_tui.app.startup import DataOptions
from cave_tui.dataio import load as load_module
from cave_tui.dataio import progress as progress_module
from cave_tui.frontends.tui.widgets.load_progress import CANCEL_HINT, LoadBar

from .conftest import chat_text, settle, submit, wait_for
from .test_app_data import make_data_app, records
from .test_load_session_progress import TWO, _bar
from .test_load_session_progress import held_read as held_read  # a fixture the tests use
from .test_resume_transcript import _record


@pytest.fixture
def held_prices(tmp_path, monkeypatch) -> threading.Event:
    """first.csv (small) and prices.parquet (8 row groups) in the working folder; reading
    prices.parquet stops at its second report until the event is set or it is cancelled."""
    (tmp_path / "first.csv").write_text("a,b\n1,2\n3,4\n")
    table = pa.table({"sku": list(range(4000)), "price": [i * 0.5 for i in range(4000)]})
    pq.write_table(table, tmp_path / "prices.parquet", row_group_size=500)
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(load_module, "SMALL_FILE", 0)  # the chunked path, with progress
    released = threading.Event()
    reported = progress_module.Monitor.report
    count = {"n": 0}

    def report_then_wait(self, *args, **kwargs):  # type: ignore[no-untyped-def]
        reported(self, *args, **kwargs)
        if "prices" not in self.path:
            return
        count["n"] += 1
        deadline = time.monotonic() + 30
        while count["n"] >= 2 and not released.is_set() and time.monotonic() < deadline:
            self.check()  # a cancel stops it here (LoadCancelled)
            time.sleep(0.01)

    monkeypatch.setattr(progress_module.Monitor, "report", report_then_wait)
    return released


def _held(app) -> bool:
    bars = [b for b in app.chat.query(LoadBar) if "prices" in b.label]
    return bool(bars) and bool(bars[0].query(".load-hint")) and bars[0].bar.progress > 0


@pytest.mark.parametrize("key", ["escape", "ctrl+c"])
async def test_esc_or_ctrl_c_cancels_the_starts_loads_and_the_app_goes_on(
    tmp_path, held_prices, key
):
    data = DataOptions(inject=["first.csv", "prices.parquet"], sessions_dir=tmp_path / "sessions")
    app = make_data_app(["```python\nprint(first.a.sum())\n```", "It is 4."], data)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: _held(app))
            assert CANCEL_HINT in str(
                app.chat.query(LoadBar).last().query(".load-hint").first().render()
            )
            await pilot.press(key)
            await wait_for(
                pilot, lambda: "Cancelled: not loaded: --inject prices.parquet" in chat_text(app)
            )
            await wait_for(pilot, lambda: app.services.session is not None)
            await settle(pilot)
            assert app.is_running and app.services.ready
            names = app.services.runtime._ns
            assert "first" in names and "prices" not in names
            assert not app.chat.query(LoadBar) and not app.loads.running
            # The session went on: it records what was loaded, and the next turn runs.
            session = app.services.session.dir
            injected = [r for r in records(session) if r["type"] == "injection"]
            assert [r["name"] for r in injected] == ["first"]
            await submit(pilot, "sum a")
            await wait_for(pilot, lambda: "It is 4." in chat_text(app))
    finally:
        held_prices.set()


async def test_esc_cancels_a_resume_at_start_and_a_new_session_goes_on(tmp_path, held_read):
    """A cancelled `--resume` leaves its session as it was; the app starts a new one."""
    released, folders = held_read
    sessions = tmp_path / "sessions"
    first = await _record(sessions, TWO, "make birds and fish")
    folders.append(first)
    before = (sessions / first / "events.jsonl").read_bytes()
    app = make_data_app([], DataOptions(resume=first, sessions_dir=sessions))
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_for(pilot, lambda: _bar(app) is not None)
            await pilot.press("escape")
            await wait_for(
                pilot, lambda: f"Cancelled: not loaded: --resume {first}" in chat_text(app)
            )
            await wait_for(pilot, lambda: app.services.session is not None)
            assert app.is_running and app.services.session.dir.name != first
            names = app.services.runtime._ns
            assert "birds" not in names and "fish" not in names
            assert not any(
                m["content"] == "make birds and fish" for m in app.services.agent.history
            )
    finally:
        released.set()
    assert (sessions / first / "events.jsonl").read_bytes() == before
