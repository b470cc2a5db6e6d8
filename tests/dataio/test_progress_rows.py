"""A load's progress says the bytes and the rows read so far (issue 34, item 4): a CSV read in
chunks and a parquet file read by row groups report bytes with the rows beside them; `/dump`
reports its progress to the front end, variable by variable."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from cave_tui.app.commands import load_commands
from cave_tui.app.commands.data import progress_amount, shown_path
from cave_tui.dataio import load as load_module
from cave_tui.dataio import load_file
from cave_tui.dataio.progress import Progress
from cave_tui.runtime.items import Variable
from tests.helpers.front_end import RecordingContext
from tests.session.helpers import TWO_TURNS, scripted_agent


@pytest.fixture
def chunked(monkeypatch):
    monkeypatch.setattr(load_module, "SMALL_FILE", 0)
    monkeypatch.setattr(load_module, "CSV_CHUNK_ROWS", 1_000)


def _frame(rows: int) -> pd.DataFrame:
    return pd.DataFrame({"a": np.arange(rows), "b": np.arange(rows) * 0.5})


@pytest.mark.parametrize("suffix", ["csv", "parquet"])
def test_a_chunked_load_reports_bytes_and_rows(tmp_path, chunked, suffix):
    path = tmp_path / f"f.{suffix}"
    frame = _frame(5_000)
    if suffix == "csv":
        frame.to_csv(path, index=False)
    else:
        frame.to_parquet(path, row_group_size=1_000)
    reports: list[Progress] = []
    load_file(path, progress=reports.append)
    reading = [r for r in reports if r.stage == "reading"]
    assert reading and all(r.unit == "bytes" for r in reading)
    rows = [r.rows for r in reading if r.rows is not None]
    assert rows == sorted(rows) and rows[-1] >= 4_000  # one chunk or group before the end
    assert reading[-1].total > 0 and reading[-1].done <= reading[-1].total
    shown = progress_amount(reading[-1])
    assert " of " in shown and f"{rows[-1]:,} rows" in shown


def test_progress_amount_says_bytes_and_rows():
    p = Progress(3 * 1024, 7 * 1024, "bytes", "reading", "f.csv", 1.0, rows=1_200)
    assert progress_amount(p) == "3.0 KB of 7.0 KB · 1,200 rows"
    assert progress_amount(Progress(3, 8, "arrays")) == "3 of 8 arrays"


async def test_dump_reports_its_progress_to_the_front_end(tmp_path):
    registry = load_commands()
    ctx = RecordingContext(scripted_agent(TWO_TURNS))
    for name in ("a", "b", "c"):
        ctx.runtime.inject(Variable(name, _frame(10)))
    assert await registry.dispatch(f"/dump {tmp_path / 'out'}", ctx)
    reports = [call for name, call in ctx.recorded.calls if name == "progress"]
    assert len(reports) >= 3
    (progress,) = reports[-1]["args"]
    assert progress.unit == "variables" and progress.stage == "writing"
    assert reports[-1]["label"] == shown_path(tmp_path / "out")
