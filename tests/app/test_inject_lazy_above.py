"""Automatic lazy injection (issue 37, item 3): a Parquet or CSV source above the `lazy_above`
setting binds as a lazy frame and the notice says so and how to load it whole (`--eager`,
`:eager`); under it, it loads eagerly as before. `--lazy=dask` binds a Dask frame."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cave_tui import CaveAgent
from cave_tui.app.commands import load_commands
from cave_tui.app.data_options import DataOptions
from cave_tui.app.startup import preseed
from cave_tui.dataio import DataIOError, parse_inject_spec
from cave_tui.dataio.inject import Injection
from cave_tui.models import ScriptedModel
from cave_tui.runtime.ipython import IPythonRuntime
from tests.helpers.front_end import RecordingContext

pl = pytest.importorskip("polars")
dd = pytest.importorskip("dask.dataframe")

GiB = 2**30


@pytest.fixture
def flights(tmp_path: Path) -> Path:
    path = tmp_path / "flights.parquet"
    pd.DataFrame({"n": range(200), "dest": ["JFK", "LGA"] * 100}).to_parquet(path)
    return path


@pytest.fixture
async def ctx() -> Any:
    runtime = IPythonRuntime()
    context = RecordingContext(CaveAgent(ScriptedModel([]), runtime))
    yield context
    await runtime.stop()


async def test_above_lazy_above_a_parquet_binds_lazily_and_says_how_to_load_it_whole(
    ctx: Any, flights: Path
) -> None:
    registry = load_commands()
    assert await registry.dispatch("/set lazy_above 1K", ctx), ctx.last
    assert await registry.dispatch(f"/inject {flights}", ctx), ctx.last
    assert isinstance(await ctx.runtime.retrieve("flights"), pl.LazyFrame)
    assert "lazy polars frame" in ctx.last and "bound lazily" in ctx.last
    assert "above lazy_above (1 KiB)" in ctx.last and "--eager" in ctx.last
    assert await registry.dispatch(f"/inject {flights} --eager as whole", ctx), ctx.last
    whole = await ctx.runtime.retrieve("whole")
    assert isinstance(whole, pd.DataFrame) and len(whole) == 200
    assert "lazily" not in ctx.last


async def test_under_lazy_above_the_file_loads_eagerly_as_before(ctx: Any, flights: Path) -> None:
    assert ctx.services.config.lazy_above == "auto"
    assert await load_commands().dispatch(f"/inject {flights}", ctx), ctx.last
    assert isinstance(await ctx.runtime.retrieve("flights"), pd.DataFrame)
    assert "lazily" not in ctx.last


async def test_an_inject_option_above_the_threshold_binds_lazily_unless_eager(
    flights: Path,
) -> None:
    runtime = IPythonRuntime()
    options = DataOptions(inject=[f"{flights}:lazy_one", f"{flights}:eager_one:eager"])
    done = await preseed(runtime, options, lazy_above=1024)
    lazy_one, eager_one = (d for d in done if isinstance(d, Injection))
    assert isinstance(await runtime.retrieve("lazy_one"), pl.LazyFrame)
    assert "bound lazily" in lazy_one.summary() and ":eager" in lazy_one.summary()
    assert isinstance(await runtime.retrieve("eager_one"), pd.DataFrame)
    assert "lazily" not in eager_one.summary()
    assert "bound lazily" not in runtime.descriptions()["lazy_one"]  # the user's notice only
    await runtime.stop()


async def test_a_lazy_injection_replays_lazily_from_its_record(flights: Path) -> None:
    from cave_tui.session.replay import ReplayError, redo_setup

    runtime = IPythonRuntime()
    done = await preseed(runtime, DataOptions(inject=[str(flights.parent)]), lazy_above=1024)
    record = {"type": "inject", "name": "again", "source": done[0].source}
    assert await redo_setup(record, runtime) == ["again"]  # a folder: no file to re-read
    assert isinstance(await runtime.retrieve("again"), pl.LazyFrame)
    record["source"] = {**done[0].source, "path": str(flights.parent / "gone")}
    with pytest.raises(ReplayError, match="lazily injected"):
        await redo_setup(record, runtime)
    await runtime.stop()


def test_the_threshold_auto_is_the_smaller_of_2_gib_and_half_the_memory_limit() -> None:
    from cave_tui.dataio.inject import lazy_threshold

    assert lazy_threshold("auto", None) == 2 * GiB
    assert lazy_threshold("auto", 1 * GiB) == GiB // 2
    assert lazy_threshold("auto", 16 * GiB) == 2 * GiB
    assert lazy_threshold("off", 1 * GiB) is None
    assert lazy_threshold("500M", None) == 500 * 2**20


async def test_lazy_dask_binds_a_dask_frame(ctx: Any, flights: Path) -> None:
    registry = load_commands()
    assert await registry.dispatch(f"/inject {flights} --lazy=dask as ddf", ctx), ctx.last
    ddf = await ctx.runtime.retrieve("ddf")
    assert isinstance(ddf, dd.DataFrame) and "lazy dask frame" in ctx.last
    assert int(ddf.n.sum().compute()) == sum(range(200))
    spec = parse_inject_spec(f"{flights}:other:lazy=dask")
    assert (spec.name, spec.lazy, spec.engine) == ("other", True, "dask")
    with pytest.raises(DataIOError, match="polars or dask, not 'spark'"):
        parse_inject_spec(f"{flights}:lazy=spark")
    assert not await registry.dispatch(f"/inject {flights} --lazy=spark", ctx)
    assert "polars or dask" in ctx.last
    assert not await registry.dispatch(f"/inject {flights} --lazy --eager", ctx)
    assert "give one of" in ctx.last
