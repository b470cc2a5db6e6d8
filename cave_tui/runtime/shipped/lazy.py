"""Lazy and distributed frames, described without computing them or reading their data.

A Dask DataFrame (on a `dask.distributed` cluster or not), a Polars LazyFrame, a DuckDB
relation or connection, an Ibis table or a PySpark DataFrame holds a plan, not rows: its
`len()`, `shape`, `repr` or a pickle may run the whole plan. `lazy_facts(obj)` reads what each
engine knows without running it: the schema, the partitions, and the row count only where
it is known (an in-memory Polars DataFrame). Objects are recognised by their class's module
and name, never by importing the library (a library the user has not imported is not loaded).
Standard library only: the kernel runs this file as `_cave_lazy`.
"""

from __future__ import annotations

import enum
import sys
from dataclasses import dataclass, field
from typing import Any

MAX_TABLES = 12  # a DuckDB connection's tables listed


class Engine(enum.Enum):
    """The kinds of frames this module knows, by their library and class."""

    DASK = "dask"
    POLARS = "polars"  # an in-memory Polars DataFrame: its height is known
    POLARS_LAZY = "polars-lazy"
    DUCKDB_RELATION = "duckdb-relation"
    DUCKDB_CONNECTION = "duckdb-connection"
    IBIS = "ibis"
    SPARK = "spark"


class Mode(enum.Enum):
    """How the frame's rows come to be: how the model is told to get a small result."""

    IN_MEMORY = "in memory"
    LAZY = "lazy"
    DISTRIBUTED = "distributed"
    DATABASE = "database"


# (top-level module, class name) of each known class; a subclass is known by its MRO.
_CLASSES: dict[tuple[str, str], Engine] = {
    ("dask", "DataFrame"): Engine.DASK,
    ("dask", "Series"): Engine.DASK,
    ("dask_expr", "DataFrame"): Engine.DASK,
    ("dask_expr", "Series"): Engine.DASK,
    ("polars", "DataFrame"): Engine.POLARS,
    ("polars", "LazyFrame"): Engine.POLARS_LAZY,
    ("duckdb", "DuckDBPyRelation"): Engine.DUCKDB_RELATION,
    ("_duckdb", "DuckDBPyRelation"): Engine.DUCKDB_RELATION,
    ("duckdb", "DuckDBPyConnection"): Engine.DUCKDB_CONNECTION,
    ("_duckdb", "DuckDBPyConnection"): Engine.DUCKDB_CONNECTION,
    ("ibis", "Table"): Engine.IBIS,
    ("pyspark", "DataFrame"): Engine.SPARK,
}
_TYPE_NAMES = {
    Engine.DASK: "dask.{cls}",
    Engine.POLARS: "polars.DataFrame",
    Engine.POLARS_LAZY: "polars.LazyFrame",
    Engine.DUCKDB_RELATION: "duckdb.Relation",
    Engine.DUCKDB_CONNECTION: "duckdb.Connection",
    Engine.IBIS: "ibis.Table",
    Engine.SPARK: "pyspark.DataFrame",
}
# How to get a small result: written after the variable's name.
SMALL_RESULTS = {
    Engine.DASK: ".head() or .compute() on a reduced result",
    Engine.POLARS: ".head()",
    Engine.POLARS_LAZY: ".head(5).collect() or .collect() on a reduced result",
    Engine.DUCKDB_RELATION: ".limit(5).df() or .df() on an aggregate",
    Engine.DUCKDB_CONNECTION: ".sql('... LIMIT 5').df()",
    Engine.IBIS: ".head(5).to_pandas()",
    Engine.SPARK: ".limit(5).toPandas()",
}


@dataclass
class Facts:
    """What is known of a lazy or distributed frame without computing it."""

    engine: Engine
    type_name: str  # "dask.DataFrame", "polars.LazyFrame", ...
    mode: Mode
    columns: list[tuple[str, str]] = field(default_factory=list)  # (name, dtype)
    rows: int | None = None  # only when known without computing
    partitions: int | None = None
    tables: list[str] = field(default_factory=list)  # a DuckDB connection's "schema.table"
    small_result: str = ""  # how to get a small result: ".head(5).collect()"

    def text(self) -> str:
        """As the namespace shows it: "lazy, 4 partitions, rows not computed"."""
        parts = [self.mode.value]
        if self.partitions is not None:
            parts.append(f"{self.partitions} partitions")
        if self.rows is None and self.engine is not Engine.DUCKDB_CONNECTION:
            parts.append("rows not computed")
        if self.tables:
            parts.append("tables: " + ", ".join(self.tables))
        return ", ".join(parts)


def engine_of(obj: Any) -> Engine | None:
    """The engine of *obj*'s class (or a base class), or None; no library is imported."""
    try:
        mro = type.__dict__["__mro__"].__get__(type(obj), type)
    except Exception:
        return None
    for klass in mro:
        module = str(type.__dict__["__module__"].__get__(klass, type) or "").split(".", 1)[0]
        if module not in sys.modules:  # never loaded: none of its classes can be here
            continue
        found = _CLASSES.get((module, klass.__name__))
        if found is not None:
            return found
    return None


def lazy_facts(obj: Any) -> Facts | None:
    """*obj*'s `Facts`, or None when it is no frame this module knows. Reads schemas and
    metadata only: never runs the plan, never reads rows (a Parquet scan's schema may read
    the files' footers, a CSV scan's the first lines its schema is inferred from)."""
    engine = engine_of(obj)
    if engine is None:
        return None
    found = Facts(engine, _TYPE_NAMES[engine], Mode.LAZY, small_result=SMALL_RESULTS[engine])
    if engine is Engine.DASK:
        found.type_name = found.type_name.format(cls=type(obj).__name__)
        found.mode = Mode.DISTRIBUTED if _dask_client() else Mode.LAZY
        found.partitions = int(obj.npartitions)
        meta = obj._meta  # an empty pandas object: the schema, no rows
        if getattr(meta, "ndim", 2) == 1:
            found.columns = [(str(meta.name), str(meta.dtype))]
        else:
            found.columns = [(str(c), str(t)) for c, t in meta.dtypes.items()]
    elif engine in (Engine.POLARS, Engine.POLARS_LAZY):
        schema = obj.collect_schema() if engine is Engine.POLARS_LAZY else obj.schema
        found.columns = [(str(c), str(t)) for c, t in schema.items()]
        if engine is Engine.POLARS:
            found.mode, found.rows = Mode.IN_MEMORY, int(obj.height)
    elif engine is Engine.DUCKDB_RELATION:
        found.mode = Mode.DATABASE
        found.columns = [(str(c), str(t)) for c, t in zip(obj.columns, obj.types, strict=False)]
    elif engine is Engine.DUCKDB_CONNECTION:
        found.mode = Mode.DATABASE
        found.tables = _duckdb_tables(obj)
    elif engine is Engine.IBIS:
        found.columns = [(str(c), str(t)) for c, t in obj.schema().items()]
    elif engine is Engine.SPARK:
        found.mode = Mode.DISTRIBUTED
        found.columns = [(str(c), str(t)) for c, t in obj.dtypes]
    return found


def _dask_client() -> bool:
    """Whether a `dask.distributed` client is the default scheduler (none is started)."""
    client_module = sys.modules.get("distributed.client")
    get = getattr(client_module, "_get_global_client", None)
    try:
        return get is not None and get() is not None
    except Exception:
        return False


def _duckdb_tables(connection: Any) -> list[str]:
    """ "schema.table (N columns)" from DuckDB's catalog, on a cursor of its own (the
    user's connection keeps its pending result); no table is read."""
    query = (
        "SELECT schema_name, table_name, column_count FROM duckdb_tables() "
        f"ORDER BY schema_name, table_name LIMIT {MAX_TABLES + 1}"
    )
    cursor = connection.cursor()
    try:
        found = cursor.execute(query).fetchall()
    finally:
        cursor.close()
    out = [f"{schema}.{table} ({columns} columns)" for schema, table, columns in found]
    return out[:MAX_TABLES] + (["…"] if len(out) > MAX_TABLES else [])


def short_text(obj: Any) -> str:
    """A one-line stand-in for *obj*'s repr (which may run the plan): type and mode."""
    try:
        found = lazy_facts(obj)
    except Exception as exc:
        return f"<{type(obj).__name__}: not described: {type(exc).__name__}>"
    if found is None or found.mode is Mode.IN_MEMORY:  # its own repr is bounded: used
        return ""
    return f"<{found.type_name}: {found.text()}>"


def unsaved_reason(obj: Any) -> str | None:
    """Why a snapshot does not write *obj* (writing it would run its plan; an explicit dump
    streams what `streams` says), or None for objects this module does not hold back (an
    in-memory Polars frame is saved)."""
    engine = engine_of(obj)
    if engine is None or engine is Engine.POLARS:
        return None
    name = _TYPE_NAMES[engine].format(cls=type(obj).__name__)
    if engine is Engine.DUCKDB_CONNECTION:
        return f"a {name}: an open database connection is not saved; connect again"
    if engine in STREAMED:
        return (
            f"a {name}: a snapshot never computes it; /dump DIR or "
            "`/retrieve NAME out.parquet` streams it to Parquet"
        )
    return f"a {name}: saving it would compute it; " + not_streamed_reason(engine, name)


def streams(obj: Any) -> bool:
    """Whether an explicit dump streams *obj* to Parquet (`stream_parquet`)."""
    return engine_of(obj) in STREAMED


def scan_engine_of(type_name: str) -> ScanEngine:
    """The engine a streamed frame of *type_name* ("dask.DataFrame", …) is scanned back with."""
    return ScanEngine.DASK if type_name.startswith("dask.") else ScanEngine.POLARS


class ScanEngine(enum.Enum):
    """The library a lazy injection binds its frame with."""

    POLARS = "polars"
    DASK = "dask"


SCAN_FORMATS = ("parquet", "csv")


def scan(path: str, fmt: str, engine: ScanEngine = ScanEngine.POLARS) -> Any:
    """A lazy frame over *path* (a file, a directory or a glob) in *fmt*: Polars
    `scan_parquet`/`scan_csv` or Dask `read_parquet`/`read_csv`. Nothing is read but
    metadata; ValueError for a format neither reads lazily."""
    if fmt not in SCAN_FORMATS:
        raise ValueError(f"a lazy frame reads {' or '.join(SCAN_FORMATS)}, not {fmt}")
    if engine is ScanEngine.DASK:
        import dask.dataframe as dd

        return dd.read_parquet(path) if fmt == "parquet" else dd.read_csv(path)
    import polars as pl

    source = path.rstrip("/") + "/**/*." + fmt if _is_dir(path) else path
    return pl.scan_parquet(source) if fmt == "parquet" else pl.scan_csv(source)


def _is_dir(path: str) -> bool:
    import os

    return os.path.isdir(path)


# -- streaming a lazy frame to a Parquet file, where it lives ------------------------------
STREAMED = (Engine.POLARS_LAZY, Engine.DASK, Engine.DUCKDB_RELATION)
PARQUET_SUFFIX = ".parquet"


class StreamError(Exception):
    """A lazy frame could not be streamed to Parquet: the message says why."""


class NotStreamed(StreamError):
    """A lazy frame cave does not stream (a connection, a Spark or Ibis frame, a target that
    is not Parquet): the message says what to do instead."""


@dataclass(frozen=True)
class Streamed:
    """A lazy frame written to a Parquet file where it lives: only these facts come back."""

    path: str
    rows: int
    bytes: int
    type_name: str

    def to_dict(self) -> dict[str, Any]:
        return {"path": self.path, "rows": self.rows, "bytes": self.bytes, "type": self.type_name}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> Streamed:
        return cls(str(data["path"]), int(data["rows"]), int(data["bytes"]), str(data["type"]))


def not_streamed_reason(engine: Engine, type_name: str) -> str:
    """Why a frame of *engine* is not streamed to a file by cave, and what writes it."""
    if engine is Engine.DUCKDB_CONNECTION:
        return (
            f"a {type_name} holds tables, not one frame: stream a relation of it "
            "(`t = con.table('name')`, then /retrieve t out.parquet) or COPY it in a cell"
        )
    if engine is Engine.SPARK:
        return f"a {type_name} is written by Spark where it runs: df.write.parquet(PATH) in a cell"
    return f"a {type_name} is not streamed by cave: write it with its own to_parquet in a cell"


def stream_parquet(obj: Any, path: str, *, overwrite: bool = False) -> Streamed | None:
    """Write the lazy or distributed frame *obj* to the Parquet file *path* without collecting
    it: Polars `sink_parquet` (its streaming engine), Dask a partition at a time, DuckDB its
    own COPY. None when *obj* is no lazy frame (an in-memory value: saved the ordinary way).
    Written to a locked hidden sibling and renamed into place (no half file at *path*).
    FileExistsError (*path* exists, not *overwrite*); NotStreamed; StreamError."""
    engine = engine_of(obj)
    if engine is None or engine is Engine.POLARS:
        return None
    type_name = _TYPE_NAMES[engine].format(cls=type(obj).__name__)
    if engine not in STREAMED:
        raise NotStreamed(not_streamed_reason(engine, type_name))
    import os

    if not path.lower().endswith(PARQUET_SUFFIX):
        raise NotStreamed(
            f"a {type_name} is written only as Parquet, streamed: name the file "
            f"{os.path.basename(path) or 'NAME'}{PARQUET_SUFFIX}, or retrieve a small result "
            "computed in a cell"
        )
    if os.path.lexists(path) and not overwrite:
        raise FileExistsError(f"{path} already exists ({os.path.getsize(path):,} bytes)")
    folder, base = os.path.split(os.path.abspath(path))
    import uuid

    tmp = os.path.join(folder, f".{base}.{uuid.uuid4().hex[:12]}.tmp")  # as atomic.py names it
    try:
        fd = os.open(tmp, os.O_CREAT | os.O_EXCL | os.O_WRONLY | os.O_CLOEXEC, 0o666)
    except OSError as exc:
        raise StreamError(f"cannot write {folder}: {exc.strerror or exc}") from None
    try:
        _lock(fd)  # a write in progress: `cleanup_temp_files` leaves it alone
        rows = _write(engine, obj, tmp, fd)
        os.replace(tmp, path)
    except (StreamError, KeyboardInterrupt):
        _remove(tmp)
        raise
    except Exception as exc:  # the engine's own error: the plan failed, a full disk, …
        _remove(tmp)
        why = f"{type(exc).__name__}: {exc}"
        raise StreamError(f"streaming the {type_name} failed: {why}") from None
    finally:
        os.close(fd)
    return Streamed(path, rows, os.path.getsize(path), type_name)


def _write(engine: Engine, obj: Any, path: str, fd: int) -> int:
    """Stream *obj* to *path* (open as *fd*); the rows written."""
    import os

    import pyarrow.parquet as pq

    if engine is Engine.POLARS_LAZY:
        # Through our descriptor, never the path: a failed plan returns while Polars' sink
        # can still be opening its file, which would recreate the temp file once removed.
        with os.fdopen(os.dup(fd), "wb") as out:
            obj.sink_parquet(out)
    elif engine is Engine.DUCKDB_RELATION:
        obj.write_parquet(path)
    else:
        return _dask_parquet(obj, path)
    return int(pq.read_metadata(path).num_rows)  # from the footer: no row is read


def _dask_parquet(frame: Any, path: str) -> int:
    """A Dask frame to one Parquet file, a partition at a time (one in memory at once)."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    if getattr(frame._meta, "ndim", 2) == 1:
        frame = frame.to_frame()
    if frame._meta.index.name is not None:
        frame = frame.reset_index()  # a named index is kept as a column
    rows = 0
    writer = None
    try:
        for part in frame.to_delayed():
            table = pa.Table.from_pandas(part.compute(), preserve_index=False)
            if writer is None:
                writer = pq.ParquetWriter(path, table.schema)
            writer.write_table(table.cast(writer.schema))
            rows += table.num_rows
        if writer is None:  # no partition: the schema alone
            empty = pa.Table.from_pandas(frame._meta, preserve_index=False)
            pq.write_table(empty, path)
    finally:
        if writer is not None:
            writer.close()
    return rows


def _lock(fd: int) -> None:
    try:
        import fcntl

        fcntl.flock(fd, fcntl.LOCK_EX)
    except (ImportError, OSError):  # no flock here: the write goes on unlocked
        pass


def _remove(path: str) -> None:
    import os

    try:
        os.unlink(path)
    except OSError:
        pass
