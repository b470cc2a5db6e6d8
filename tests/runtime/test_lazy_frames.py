"""Lazy and distributed frames in the namespace (issue 37, items 2 and 4): summaries, the
inspector's detail, the links finder, snapshots and dumps describe them from their schema
and never compute them.

The objects are real and tell on any computation: the Dask frame lives on a LocalCluster
whose scheduler counts task transitions, the Polars plan calls a counting function, and the
DuckDB relation reads a Parquet file overwritten with garbage after it was bound (any read
raises, so a summary that read it would show an error instead of the schema).
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pandas as pd
import pytest

from cave_tui.agent.prompt import describe_namespace
from cave_tui.dataio import dump_namespace, load_dump
from cave_tui.dataio.checkpoint import checkpoint_namespace
from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.runtime.items import Variable
from cave_tui.runtime.shipped import lazy
from cave_tui.runtime.shipped.persist import Keep
from cave_tui.security.checker import SecurityChecker
from cave_tui.security.policies import policy_spec

dd = pytest.importorskip("dask.dataframe")
distributed = pytest.importorskip("distributed")
pl = pytest.importorskip("polars")
duckdb = pytest.importorskip("duckdb")

FRAME = pd.DataFrame({"faa": ["JFK", "LGA", "EWR"] * 20, "n": range(60)})


class Tally:
    """Counts the computations the objects below could run."""

    def __init__(self, scheduler: Any) -> None:
        self.scheduler = scheduler
        self.polars_calls = 0

    def dask_transitions(self) -> int:
        return int(self.scheduler.transition_counter)


@pytest.fixture(scope="module")
def objects(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[dict[str, Any], Tally]]:
    cluster = distributed.LocalCluster(
        n_workers=1, threads_per_worker=1, processes=False, dashboard_address=None
    )
    client = distributed.Client(cluster)
    tally = Tally(cluster.scheduler)

    def counted(series: Any) -> Any:
        tally.polars_calls += 1
        return series

    folder = tmp_path_factory.mktemp("lazy")
    parquet = folder / "airports.parquet"
    FRAME.to_parquet(parquet)
    con = duckdb.connect()
    con.execute("CREATE TABLE flights AS SELECT * FROM range(5) r(i)")
    relation = con.read_parquet(str(parquet))
    parquet.write_bytes(b"not parquet any more")  # a relation that reads it now raises
    objects = {
        "ddf": dd.from_pandas(FRAME, npartitions=3).persist(),  # data on the cluster
        "dseries": dd.from_pandas(FRAME, npartitions=3)["n"] * 2,
        "lf": pl.LazyFrame(FRAME).with_columns(
            m=pl.col("n").map_batches(counted, return_dtype=pl.Int64)
        ),
        "pdf": pl.DataFrame(FRAME),
        "rel": relation,
        "con": con,
        "airports": FRAME.drop_duplicates("faa"),  # a pandas lookup frame for the links finder
    }
    distributed.wait(objects["ddf"])
    yield objects, tally
    con.close()
    client.close()
    cluster.close()


@pytest.fixture
async def runtime(objects: tuple[dict[str, Any], Tally]) -> Any:
    rt = IPythonRuntime()
    for name, value in objects[0].items():
        rt.inject_variable(Variable(name, value))
    yield rt
    await rt.stop()


async def test_summary_detail_and_links_describe_from_the_schema_without_computing(
    objects: tuple[dict[str, Any], Tally], runtime: IPythonRuntime
) -> None:
    _, tally = objects
    before = tally.dask_transitions()
    rows = {row.name: row for row in await runtime.namespace_listing()}
    rows |= {row.name: row for row in await runtime.namespace_summary()}
    details = {name: await runtime.detail(name) for name in ("ddf", "lf", "rel", "con")}
    assert tally.dask_transitions() == before  # no task ran on the cluster
    assert tally.polars_calls == 0

    ddf, lf, rel, con = rows["ddf"], rows["lf"], rows["rel"], rows["con"]
    assert ddf.type_name == "dask.DataFrame" and ddf.shape is None
    assert [c.text() for c in ddf.columns] == ["faa:string", "n:int64"] or [
        c.name for c in ddf.columns
    ] == ["faa", "n"]
    assert ddf.lazy.startswith("distributed, 3 partitions, rows not computed")
    assert rows["dseries"].type_name == "dask.Series"
    assert lf.type_name == "polars.LazyFrame" and [c.name for c in lf.columns] == ["faa", "n", "m"]
    assert lf.shape is None and "rows not computed" in lf.lazy
    assert rel.type_name == "duckdb.Relation" and [c.name for c in rel.columns] == ["faa", "n"]
    assert "main.flights (1 columns)" in con.lazy
    assert rows["pdf"].shape == (60, 2) and not rows["pdf"].lazy  # in memory: its height is known
    assert not ddf.relations.links and not rel.relations.links  # the links finder left them
    assert details["lf"].dtypes == [("faa", "String"), ("n", "Int64"), ("m", "Int64")]
    assert "rows not computed" in details["rel"].text and not details["rel"].head


async def test_the_namespace_line_says_lazy_and_how_to_get_a_small_result(
    runtime: IPythonRuntime,
) -> None:
    text = describe_namespace(await runtime.namespace_summary())
    assert "- ddf: dask.DataFrame (distributed, 3 partitions, rows not computed; small " in text
    assert "small result: ddf.head()" in text
    assert "small result: lf.head(5).collect()" in text
    assert "small result: rel.limit(5).df()" in text
    assert "- pdf: polars.DataFrame 60x2" in text


@pytest.mark.parametrize("policy", ["standard", "strict"])
def test_the_guard_never_refuses_the_small_results_the_model_is_told(policy: str) -> None:
    spec = policy_spec(policy)
    checker = SecurityChecker(spec.rules, magics=spec.magics, policy=policy)
    for engine, small in lazy.SMALL_RESULTS.items():
        code = f"frame = given\nsmall = frame{small.split(' or ')[0]}\n"
        assert checker.check(code) == [], (engine, code)
    for code in ("lf.collect()", "ddf.n.sum().compute()", "ddf.head()", "lf.head(5).collect()"):
        assert checker.check(code) == [], code


async def test_snapshots_skip_lazy_frames_with_the_reason_and_compute_nothing(
    objects: tuple[dict[str, Any], Tally], runtime: IPythonRuntime, tmp_path: Path
) -> None:
    _, tally = objects
    before = tally.dask_transitions()
    kept = {row.name: row for row in await runtime.persistable(digest_below=1 << 20)}
    result = await checkpoint_namespace(runtime, tmp_path / "snapshot")
    assert tally.dask_transitions() == before
    assert tally.polars_calls == 0
    for name in ("ddf", "dseries", "lf", "rel", "con"):
        assert kept[name].keep is Keep.NOTHING, name
    skipped = {entry["name"]: entry["reason"] for entry in result.skipped}
    assert "a dask.DataFrame: a snapshot never computes it; /dump DIR" in skipped["ddf"]
    assert "streams it to Parquet" in skipped["lf"]
    assert "connection" in skipped["con"]
    assert {"pdf", "airports"} <= set(result.written)  # in-memory frames are written


async def test_an_explicit_dump_streams_lazy_frames_and_loads_them_back_as_scans(
    objects: tuple[dict[str, Any], Tally], tmp_path: Path
) -> None:
    given = objects[0]
    runtime = IPythonRuntime()
    frames = {
        "lf": pl.LazyFrame(FRAME).filter(pl.col("n") < 30),
        "ddf": dd.from_pandas(FRAME, npartitions=3),  # on the module's LocalCluster
        "dseries": dd.from_pandas(FRAME, npartitions=3)["n"] * 2,
        "rel": duckdb.sql("SELECT range AS i FROM range(7)"),
        "broken": given["rel"],  # its file was overwritten: reading it fails
        "con": given["con"],
    }
    for name, value in frames.items():
        runtime.inject_variable(Variable(name, value))
    result = await dump_namespace(runtime, tmp_path / "dump")
    saved = {entry["name"]: entry for entry in result.saved}
    skipped = {entry["name"]: entry["reason"] for entry in result.skipped}
    assert {name: saved[name]["rows"] for name in ("lf", "ddf", "dseries", "rel")} == {
        "lf": 30,
        "ddf": 60,
        "dseries": 60,
        "rel": 7,
    }
    assert "not streamed to Parquet: streaming the duckdb.Relation failed" in skipped["broken"]
    assert "holds tables, not one frame" in skipped["con"] or "connection" in skipped["con"]
    assert "streamed to Parquet, never collected: " in result.summary()
    await runtime.stop()

    back = IPythonRuntime()
    await load_dump(back, tmp_path / "dump")
    lf, ddf = await back.retrieve("lf"), await back.retrieve("ddf")
    assert isinstance(lf, pl.LazyFrame)  # a scan of the written file, nothing read yet
    assert lf.collect()["n"].to_list() == list(range(30))
    assert type(ddf).__module__.startswith(("dask", "dask_expr"))
    assert ddf.compute()["n"].sum() == FRAME["n"].sum()
    assert (await back.retrieve("rel")).collect()["i"].to_list() == list(range(7))
    await back.stop()


def test_lazy_libraries_are_recognised_without_importing_them() -> None:
    class LazyFrame:  # a class of the same name from a module that is no Polars
        pass

    assert lazy.engine_of(LazyFrame()) is None
    assert lazy.engine_of(pd.DataFrame()) is None
    assert lazy.engine_of(pl.LazyFrame()) is lazy.Engine.POLARS_LAZY
