"""Windows of a frame for the detail view's table: a few rows at a time, as an Arrow table.

A pandas DataFrame or Series (its index first), a pyarrow Table or RecordBatch, or a
polars DataFrame or Series is read where it lives (in process, or in the kernel, shipped
as `_cave_frame_window`): only the rows asked for are converted, in the order of an
optional sort (stable, missing values last), and long strings are cut to `CELL_CHARS`.
The Arrow table's columns are named by position (`c0`, `c1`, …); their labels travel
apart, as text. `find` looks for a substring in the cells, chunk by chunk.
"""

from __future__ import annotations

import weakref
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import numpy as np
    import pyarrow as pa

CELL_CHARS = 200  # characters of one cell sent to the view
FIND_CHUNK = 50_000  # rows converted at a time while searching
_ORDERS = 2  # sort orders kept (the frame, the column, the direction)


class NotATable(TypeError):
    """The object is not a frame the table view shows."""


@dataclass(frozen=True)
class SortKey:
    """Sort by the column at *column* (0 is a pandas frame's index), stable, missing last."""

    column: int
    descending: bool = False


@dataclass
class FrameWindow:
    """Rows `start`… of a frame (in the sort's order), of `total_rows`, as Arrow."""

    total_rows: int
    labels: list[str]
    dtypes: list[str]
    start: int
    table: pa.Table
    index_columns: int = 0  # leading columns that are the index, not data
    notes: list[str] = field(default_factory=list)

    def meta(self) -> dict[str, Any]:
        """Everything but the table, as JSON for the kernel's reply."""
        return {
            "total_rows": self.total_rows,
            "labels": self.labels,
            "dtypes": self.dtypes,
            "start": self.start,
            "index_columns": self.index_columns,
            "notes": self.notes,
        }

    @classmethod
    def from_meta(cls, meta: dict[str, Any], table: pa.Table) -> FrameWindow:
        """A window the kernel sent: *meta* (JSON, checked here) and its decoded table."""
        labels = [str(label) for label in meta.get("labels") or []]
        dtypes = [str(dtype) for dtype in meta.get("dtypes") or []]
        if len(labels) != table.num_columns or len(dtypes) != len(labels):
            raise ValueError("a frame window whose labels do not match its columns")
        return cls(
            total_rows=max(0, int(meta.get("total_rows") or 0)),
            labels=labels,
            dtypes=dtypes,
            start=max(0, int(meta.get("start") or 0)),
            table=table,
            index_columns=int(meta.get("index_columns") or 0),
            notes=[str(note) for note in meta.get("notes") or []],
        )


def is_table(obj: Any) -> bool:
    """A frame the table view shows (pandas, pyarrow, polars)."""
    kind = type(obj)
    module, name = (kind.__module__ or "").split(".", 1)[0], kind.__name__
    return (module, name) in {
        ("pandas", "DataFrame"),
        ("pandas", "Series"),
        ("pyarrow", "Table"),
        ("pyarrow", "RecordBatch"),
        ("polars", "DataFrame"),
        ("polars", "Series"),
    }


class _Source:
    """One frame read as columns: labels, dtypes, row count, rows at positions, a column."""

    def __init__(self, obj: Any) -> None:
        if not is_table(obj):
            raise NotATable(f"a {type(obj).__name__} is not a frame")
        module = (type(obj).__module__ or "").split(".", 1)[0]
        self.pandas = None
        self.arrow = None
        if module == "pandas":
            frame = obj.to_frame() if type(obj).__name__ == "Series" else obj
            self.pandas = frame
            names = [n for n in frame.index.names if n is not None]
            index_label = ", ".join(str(n) for n in names)
            self.labels = [index_label, *(str(c) for c in frame.columns)]
            self.dtypes = [str(frame.index.dtype), *(str(t) for t in frame.dtypes)]
            self.total = len(frame)
            self.index_columns = 1
        else:
            import pyarrow as pa

            table = obj
            if module == "polars":
                frame = obj.to_frame() if type(obj).__name__ == "Series" else obj
                table = frame.to_arrow()
            if isinstance(table, pa.RecordBatch):
                table = pa.Table.from_batches([table])
            self.arrow = table
            self.labels = [str(n) for n in table.column_names]
            self.dtypes = [str(t) for t in table.schema.types]
            self.total = table.num_rows
            self.index_columns = 0

    def column(self, position: int) -> Any:
        """The column at *position* as a pandas Series (index 0 for pandas) or Arrow array."""
        if self.pandas is not None:
            import pandas as pd

            frame = self.pandas
            if position == 0:
                return pd.Series(frame.index.to_flat_index(), copy=False)
            return frame.iloc[:, position - 1].reset_index(drop=True)
        assert self.arrow is not None
        return self.arrow.column(position)

    def rows(self, positions: Any) -> pa.Table:
        """The rows at *positions* (a slice or an integer array), every column as Arrow."""
        import pyarrow as pa

        if self.pandas is not None:
            part = self.pandas.iloc[positions]
            import pandas as pd

            columns = [pd.Series(part.index.to_flat_index(), copy=False)]
            columns += [part.iloc[:, i] for i in range(part.shape[1])]
            arrays = [_arrow_column(c) for c in columns]
        else:
            assert self.arrow is not None
            if isinstance(positions, slice):
                start = positions.start or 0
                part = self.arrow.slice(start, (positions.stop or self.total) - start)
            else:
                part = self.arrow.take(pa.array(positions))
            arrays = [_cut_strings(c) for c in part.columns]
        return pa.table(arrays, names=[f"c{i}" for i in range(len(arrays))])


def _arrow_column(series: Any) -> pa.Array:
    """One pandas column as Arrow; values Arrow cannot hold become their (cut) text."""
    import pyarrow as pa

    try:
        array = pa.array(series, from_pandas=True)
    except (pa.ArrowException, TypeError, ValueError):
        array = pa.array([None if _missing(v) else _text(v) for v in series], pa.string())
    return _cut_strings(array)


def _missing(value: Any) -> bool:
    try:
        return bool(value is None or value != value)
    except Exception:
        return False


def _text(value: Any) -> str:
    try:
        text = str(value)
    except Exception as exc:
        text = f"<{type(value).__name__}: str() failed: {type(exc).__name__}>"
    return text[:CELL_CHARS]


def _cut_strings(array: Any) -> Any:
    import pyarrow as pa
    import pyarrow.compute as pc

    if pa.types.is_string(array.type) or pa.types.is_large_string(array.type):
        return pc.utf8_slice_codeunits(array, 0, CELL_CHARS)
    return array


_orders: list[tuple[weakref.ref[Any], int, SortKey, np.ndarray]] = []


def sort_order(obj: Any, source: _Source, key: SortKey) -> np.ndarray:
    """Row positions of *obj* sorted by *key*: stable, missing values last either way."""
    for ref, total, cached_key, order in _orders:
        if ref() is obj and total == source.total and cached_key == key:
            return order
    order = _compute_order(source, key)
    try:
        _orders.insert(0, (weakref.ref(obj), source.total, key, order))
    except TypeError:  # not weakly referenceable: not kept
        return order
    del _orders[_ORDERS:]
    return order


def _compute_order(source: _Source, key: SortKey) -> np.ndarray:
    import numpy as np

    if not 0 <= key.column < len(source.labels):
        raise IndexError(f"no column {key.column}")
    column = source.column(key.column)
    if source.pandas is not None:
        ascending = not key.descending
        try:
            ordered = column.sort_values(ascending=ascending, kind="stable", na_position="last")
        except TypeError:  # values that do not compare (mixed types): by their text
            text = column.map(lambda v: None if _missing(v) else _text(v))
            ordered = text.sort_values(ascending=ascending, kind="stable", na_position="last")
        return np.asarray(ordered.index, dtype=np.int64)
    import pyarrow as pa
    import pyarrow.compute as pc

    table = pa.table([column], names=["k"])
    order = "descending" if key.descending else "ascending"
    indices = pc.sort_indices(table, sort_keys=[("k", order)], null_placement="at_end")
    return np.asarray(indices, dtype=np.int64)


def frame_window(obj: Any, start: int, stop: int, sort: SortKey | None = None) -> FrameWindow:
    """Rows [*start*, *stop*) of *obj* in *sort*'s order (NotATable if it is no frame)."""
    source = _Source(obj)
    start = max(0, min(start, source.total))
    stop = max(start, min(stop, source.total))
    positions: Any = slice(start, stop)
    if sort is not None:
        positions = sort_order(obj, source, sort)[start:stop]
    return FrameWindow(
        total_rows=source.total,
        labels=source.labels,
        dtypes=source.dtypes,
        start=start,
        table=source.rows(positions),
        index_columns=source.index_columns,
    )


def find(
    obj: Any, text: str, row: int, column: int, sort: SortKey | None = None
) -> tuple[int, int] | None:
    """The first cell after (*row*, *column*), row by row and wrapping, whose text holds
    *text* (case-insensitive): its (row, column) in *sort*'s order, or None."""
    import pyarrow as pa
    import pyarrow.compute as pc

    source = _Source(obj)
    if not text or source.total == 0:
        return None
    order = sort_order(obj, source, sort) if sort is not None else None
    width = len(source.labels)
    # Start at *row* (cells after *column* only), go to the end, then from the top back to it.
    for wrapped, (first, end) in enumerate([(row, source.total), (0, row + 1)]):
        for chunk in range(first, end, FIND_CHUNK):
            stop = min(chunk + FIND_CHUNK, end)
            positions: Any = slice(chunk, stop) if order is None else order[chunk:stop]
            table = source.rows(positions)
            best: tuple[int, int] | None = None
            for c in range(width):
                values = table.column(c)
                try:
                    strings = pc.cast(values, pa.string())
                except (pa.ArrowException, TypeError, ValueError):
                    strings = pa.array(
                        [None if v is None else _text(v) for v in values.to_pylist()]
                    )
                hits = pc.match_substring(strings, text, ignore_case=True).fill_null(False)
                hits = hits.combine_chunks() if hasattr(hits, "combine_chunks") else hits
                for at in pc.indices_nonzero(hits).to_pylist():
                    cell = (chunk + int(at), c)
                    if not wrapped and cell <= (row, column):
                        continue  # at or before the cursor: on the wrapped pass
                    if wrapped and cell > (row, column):
                        break
                    if best is None or cell < best:
                        best = cell
                    break
            if best is not None:
                return best
    return None
