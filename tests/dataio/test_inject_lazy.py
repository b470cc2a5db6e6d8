"""`/inject PATH --lazy` and `--inject PATH:NAME:lazy` (issue 37, item 3): a lazy frame over a
file, a folder or a glob, built where the runtime runs its cells; no row is read."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from cave_tui.dataio import DataIOError, inject_lazy, parse_inject_spec
from cave_tui.dataio.inject import inject_spec
from cave_tui.runtime.ipython import IPythonRuntime

pl = pytest.importorskip("polars")


@pytest.fixture
def parts(tmp_path: Path) -> Path:
    folder = tmp_path / "flights"
    folder.mkdir()
    for i in range(3):
        pd.DataFrame({"n": range(i * 10, i * 10 + 10), "dest": ["JFK"] * 10}).to_parquet(
            folder / f"part{i}.parquet"
        )
    return folder


def test_the_spec_takes_lazy_after_the_name() -> None:
    spec = parse_inject_spec("data/*.parquet:flights:lazy")
    assert (spec.source, spec.name, spec.lazy) == ("data/*.parquet", "flights", True)
    with pytest.raises(DataIOError, match="applies to a Parquet or CSV path alone"):
        parse_inject_spec("pkg:seaborn.tips:lazy")


async def test_a_folder_and_a_glob_are_bound_as_polars_scans(parts: Path) -> None:
    runtime = IPythonRuntime()
    injection = await inject_lazy(runtime, parts, "flights")
    await inject_spec(runtime, f"{parts}/part*.parquet:some:lazy")
    flights, some = await runtime.retrieve("flights"), await runtime.retrieve("some")
    assert isinstance(flights, pl.LazyFrame) and isinstance(some, pl.LazyFrame)
    assert injection.source["lazy"] == "polars" and "lazy polars frame" in injection.description
    rows = {row.name: row for row in await runtime.namespace_summary()}
    assert rows["flights"].lazy == "lazy, rows not computed"
    assert flights.select(pl.len()).collect().item() == 30  # what it reads when asked
    await runtime.stop()


async def test_a_file_neither_parquet_nor_csv_is_refused_with_the_reason(tmp_path: Path) -> None:
    (tmp_path / "a.json").write_text("{}")
    runtime = IPythonRuntime()
    with pytest.raises(DataIOError, match="reads Parquet or CSV files, not json"):
        await inject_lazy(runtime, tmp_path / "a.json")
    with pytest.raises(DataIOError, match="no such file"):
        await inject_lazy(runtime, tmp_path / "none*.parquet")
    assert await runtime.names() == []
    await runtime.stop()
