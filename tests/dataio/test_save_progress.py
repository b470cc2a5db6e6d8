"""A frame retrieved to Parquet reports its progress (bytes and rows, row group by row group)
and stops when cancelled, with nothing written (issue 34, item 4)."""

from __future__ import annotations

import threading

import numpy as np
import pandas as pd
import pytest

from cave_tui.dataio import LoadCancelled, save_object
from cave_tui.dataio import save as save_module
from cave_tui.dataio.progress import Progress


@pytest.fixture
def frame(monkeypatch) -> pd.DataFrame:
    monkeypatch.setattr(save_module, "WRITE_CHUNK_ROWS", 1_000)
    index = pd.Index([f"r{i}" for i in range(4_500)], name="row")
    return pd.DataFrame({"a": np.arange(4_500), "b": np.arange(4_500) * 0.5}, index=index)


def test_a_long_frame_reports_bytes_and_rows_and_reads_back_whole(tmp_path, frame):
    reports: list[Progress] = []
    saved = save_object(frame, tmp_path / "f.parquet", progress=reports.append)
    assert [r.rows for r in reports] == [0, 1_000, 2_000, 3_000, 4_000, 4_500]
    assert all(r.unit == "bytes" and r.stage == "writing" for r in reports)
    assert reports[-1].done == reports[-1].total > 0
    pd.testing.assert_frame_equal(pd.read_parquet(saved.path), frame)


def test_a_cancelled_write_leaves_nothing(tmp_path, frame):
    stop = threading.Event()

    def cancel_at_the_second(progress: Progress) -> None:
        if progress.rows == 1_000:
            stop.set()

    with pytest.raises(LoadCancelled, match=r"writing .*f\.parquet was cancelled"):
        save_object(frame, tmp_path / "f.parquet", cancel=stop, progress=cancel_at_the_second)
    assert list(tmp_path.iterdir()) == []  # no file, no temporary left
