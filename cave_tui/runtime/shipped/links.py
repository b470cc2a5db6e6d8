"""How the namespace's frames and values relate: lookup keys, the columns that match them,
the few values of categorical columns, and values that are codes of a lookup frame.

A small model asked for "the airport's full name" keeps the `dest` code it has, or
guesses a column `airline`: it does not see that `flights.dest` holds `airports.faa`
codes. These relations, found from the data and not from column names, go into the
namespace description (`links: dest, origin → airports.faa`) and into the agent's
check of a turn's results (codes stored where the request asked for names).

Bounded cost: keys are looked for in frames of at most KEY_MAX_ROWS rows, links from
frames of at most LINK_MAX_ROWS, and each column's distinct values are computed once
per frame object (cached by identity and shape). Pandas duck typing and no cave_tui
imports: the kernel runtime loads this file into the kernel as it is.
"""

from __future__ import annotations

import weakref
from typing import Any

KEY_MAX_ROWS = 50_000  # a lookup table (airports, airlines, planes), not a fact table
LINK_MAX_ROWS = 2_000_000
MAX_TEXT_COLUMNS = 8  # text columns looked at per frame
MIN_COVERAGE = 0.8  # share of a column's distinct values found in the key: a link
MAX_CODES = 1_000  # values of a list/Series looked at for codes
MAX_LEVELS = 6  # a text column with at most this many distinct values lists them
LEVEL_CHARS = 24  # ... when each is at most this long
MAX_DISTINCT = 2 * KEY_MAX_ROWS  # more distinct values are not kept: they link to no key
_CACHE_SIZE = 64

# By frame identity, shape and column: a frame changed in place keeps its entry until its
# shape changes, so a relation can be stale; it is a hint, and the data are never changed.
# Each entry holds a weak reference to its frame: a new frame that gets a freed frame's id
# (and shape) is not given that frame's values.
_distinct_cache: dict[tuple[int, str, str], tuple[Any, frozenset[Any]]] = {}
_key_cache: dict[tuple[int, str, str], tuple[Any, str | None]] = {}
_MISSING = object()


def _is_frame(obj: Any) -> bool:
    kind = type(obj)
    return kind.__name__ == "DataFrame" and (kind.__module__ or "").startswith("pandas")


def _is_series(obj: Any) -> bool:
    kind = type(obj)
    return kind.__name__ == "Series" and (kind.__module__ or "").startswith("pandas")


def _text_columns(df: Any) -> list[str]:
    """Columns of strings only: an object column holding anything else (a model-made class
    with its own `__hash__`) is never hashed here, so no code of the model's runs."""
    from pandas.api.types import infer_dtype

    out = []
    for column, dtype in zip(df.columns, df.dtypes, strict=False):
        kind = str(dtype)
        if not isinstance(column, str) or kind not in ("object", "string", "str", "category"):
            continue
        if kind == "object" and infer_dtype(df[column], skipna=True) != "string":
            continue
        out.append(column)
        if len(out) >= MAX_TEXT_COLUMNS:
            break
    return out


def _distinct(df: Any, column: str) -> frozenset[Any]:
    key = (id(df), str(df.shape), column)
    found = _cached(_distinct_cache, key, df)
    if found is _MISSING:
        found = frozenset(v for v in df[column].dropna().unique() if isinstance(v, str))
        if len(found) > MAX_DISTINCT:  # an id column of a big table: links to no lookup key
            found = frozenset()
        _remember(_distinct_cache, key, df, found)
    return found


def frame_key(df: Any) -> str | None:
    """The first text column whose values are unique and never missing: one row per value."""
    if not _is_frame(df) or not 2 <= len(df) <= KEY_MAX_ROWS or not df.columns.is_unique:
        return None
    cache_key = (id(df), str(df.shape), "")
    cached = _cached(_key_cache, cache_key, df)
    if cached is not _MISSING:
        return cached
    found = None
    for column in _text_columns(df):
        values = df[column]
        if values.notna().all() and values.is_unique:
            found = column
            break
    _remember(_key_cache, cache_key, df, found)
    return found


def _cached(cache: dict[Any, tuple[Any, Any]], key: Any, df: Any) -> Any:
    """The value stored for *df* under *key*, or _MISSING (also when the id was reused)."""
    entry = cache.get(key)
    if entry is None or entry[0]() is not df:
        return _MISSING
    return entry[1]


def _remember(cache: dict[Any, tuple[Any, Any]], key: Any, df: Any, value: Any) -> None:
    try:
        ref = weakref.ref(df)
    except TypeError:  # cannot be referred to weakly: not cached
        return
    if len(cache) >= _CACHE_SIZE:
        cache.pop(next(iter(cache)))
    cache[key] = (ref, value)


def _text_values(obj: Any) -> tuple[list[str], str, str]:
    """Text values to test for codes, where they are ("values" or "index"), and the name of
    the column they came from when a Series says it (`dest` for `groupby('dest').size()`)."""
    if type(obj) is str:  # exact types: no code of the model's runs here
        return [obj], "values", ""
    if type(obj) in (list, tuple) and 0 < len(obj) <= MAX_CODES:
        return (list(obj) if all(type(v) is str for v in obj) else []), "values", ""
    if _is_series(obj) and 0 < len(obj) <= MAX_CODES:
        index = [v for v in obj.index if isinstance(v, str)]
        if index and len(index) == len(obj):
            return index, "index", _name(obj.index.name)
        values = [v for v in obj.dropna() if isinstance(v, str)]
        if values and len(values) == len(obj.dropna()):
            return values, "values", _name(obj.name)
    return [], "", ""


def _name(name: Any) -> str:
    return name if type(name) is str else ""


def relations(ns: dict[str, Any], names: list[str]) -> dict[str, dict[str, Any]]:
    """Per name with a relation, as JSON-able data (summary.Relations.to_dict() entries, and
    the levels): {"key": column} for a lookup frame; {"links": [{"column": "dest", "frame":
    "airports", "key": "faa"}]} for a frame whose text columns match a lookup frame's key;
    {"levels": {"sex": ["female", "male"]}} for a frame with categorical text columns;
    {"codes": {"frame": "airports", "key": "faa", "where": "index", "source": "dest"}} for a
    value made of such codes ("source" only when the Series names the column)."""
    keys: dict[str, tuple[str, frozenset[Any]]] = {}
    for name in names:
        obj = ns.get(name)
        column = frame_key(obj)
        if column is not None:
            keys[name] = (column, _distinct(obj, column))
    out: dict[str, dict[str, Any]] = {name: {"key": column} for name, (column, _) in keys.items()}
    for name in names:
        obj = ns.get(name)
        if (
            obj is not None
            and _is_frame(obj)
            and len(obj) <= LINK_MAX_ROWS
            and obj.columns.is_unique
        ):
            levels = _levels(obj)
            if levels:
                out.setdefault(name, {})["levels"] = levels
            links = _frame_links(name, obj, keys) if keys else []
            if links:
                out.setdefault(name, {})["links"] = links
        elif keys and not _is_frame(obj):
            values, where, source = _text_values(obj)
            target = _codes_of(set(values), keys) if values else None
            if target:
                frame, key = target
                codes = {"frame": frame, "key": key, "where": where}
                out.setdefault(name, {})["codes"] = {**codes, "source": source} if source else codes
    return out


def _levels(df: Any) -> dict[str, list[str]]:
    """The few values of each categorical text column, sorted: {"sex": ["female", "male"]}.

    Shown, they keep a model from filtering `species == 'male'` or misspelling a value.
    """
    out: dict[str, list[str]] = {}
    for column in _text_columns(df):
        values = _distinct(df, column)
        repeated = 2 * len(values) <= len(df)  # not a key or a name per row
        if (
            2 <= len(values) <= MAX_LEVELS
            and repeated
            and all(len(v) <= LEVEL_CHARS for v in values)
        ):
            out[column] = sorted(values)
    return out


def _frame_links(
    name: str, df: Any, keys: dict[str, tuple[str, frozenset[Any]]]
) -> list[dict[str, str]]:
    links = []  # a key column may link too: `dest` of a frame made per destination
    for column in _text_columns(df):
        values = _distinct(df, column)
        for other, (key, key_values) in keys.items():
            if other == name or len(values) < 2 or len(values) > 2 * len(key_values):
                continue
            if len(values & key_values) >= MIN_COVERAGE * len(values):
                links.append({"column": column, "frame": other, "key": key})
                break
    return links


def _codes_of(
    values: set[str], keys: dict[str, tuple[str, frozenset[Any]]]
) -> tuple[str, str] | None:
    """(lookup frame, key column) whose key holds most of *values*."""
    for other, (key, key_values) in keys.items():  # most, as for links: a few may be unknown
        if values and len(values & key_values) >= MIN_COVERAGE * len(values):
            return other, key
    return None


def annotate(ns: dict[str, Any], rows: list[Any]) -> None:
    """Set `levels` and `relations` of summary rows (VarInfo objects or their `to_dict()`s)
    that have any, in place."""
    names = [row["name"] if isinstance(row, dict) else row.name for row in rows]
    found = relations(ns, names)
    for row in rows:
        name = row["name"] if isinstance(row, dict) else row.name
        if name not in found:
            continue
        related = dict(found[name])
        levels = related.pop("levels", {})
        if isinstance(row, dict):
            row["levels"], row["relations"] = levels, related
        else:  # summary.Relations, without importing it: this file runs in the kernel as is
            row.levels, row.relations = levels, type(row.relations).from_dict(related)
