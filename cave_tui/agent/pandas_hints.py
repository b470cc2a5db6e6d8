"""Hints for pandas errors of shape, read from the error and the failing line.

- A whole-Series reduction (`.idxmax()`, `.max()`, …) gave one value where one per group
  was meant, and the next method call fails on that value (`'tuple' object has no
  attribute 'to_dict'`).
- A column both sides of a merge have is missing from the merge's result: pandas named it
  `col_x` and `col_y`.
- A method of another pandas type (`s.join` for `s.str.join`, a DataFrame method on a Series).
- A merge a hint suggests is bound to a new name, so a given frame is never rebound.
- Several columns selected with a tuple (`g['a', 'b']`, pandas < 2 code): a list is needed.

Each returns one line, or "" when the error is not of its class.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterable, Mapping

from cave_tui.agent.syntax import code_tree

REDUCTIONS = "idxmax|idxmin|max|min|sum|mean|median|count|nunique|std|var|prod|argmax|argmin|item"
_SCALAR = re.compile(
    r"'(?P<type>tuple|str|int|float|bool|numpy\.\w+|Timestamp|Timedelta)' object has no "
    r"attribute '(?P<attr>\w+)'"
)
_GROUPED = re.compile(
    r"(?P<frame>\w+)\.groupby\(\s*(?P<by>['\"][^'\"]+['\"])\s*\)"
    r"(?:\[\s*(?P<col>['\"][^'\"]+['\"])\s*\])?"
)


def reduced_too_far(line: str, last: str) -> str:
    """`.idxmax().to_dict()` failing on a tuple: the reduction ran over the whole Series."""
    scalar = _SCALAR.search(last)
    if scalar is None:
        return ""
    attr = scalar["attr"]
    reduced = re.search(rf"\.(?P<red>{REDUCTIONS})\(\)(?:\[[^\]]*\])*\s*\.{attr}\b", line)
    if reduced is None:
        return ""
    red, kind = reduced["red"], scalar["type"]
    what = "a tuple of its index levels" if kind == "tuple" else f"a {kind}"
    grouped = _GROUPED.search(line[: reduced.start()])
    if grouped and grouped["col"] and red in ("idxmax", "idxmin") and "value_counts" in line:
        frame, by, col = grouped["frame"], grouped["by"], grouped["col"]
        per_group = f"{frame}.groupby({by})[{col}].agg(lambda s: s.value_counts().{red}())"
    elif grouped:
        frame, by, col = grouped["frame"], grouped["by"], grouped["col"]
        per_group = f"{frame}.groupby({by})" + (f"[{col}]" if col else "") + f".{red}()"
    else:
        per_group = f"df.groupby('a')['b'].{red}()"
    return (
        f"`.{red}()` gave one value for the whole Series ({what}), not one per group, and that "
        f"has no `.{attr}`. For one result per group, reduce inside each group: {per_group}."
    )


def merge_suffixes(name: str, line: str, used: Mapping[str, Mapping[str, str]]) -> str:
    """A column both merged frames have: the merge's result holds `name_x` and `name_y`.
    *used* are the frames *line* names (name → column → dtype), in namespace order."""
    if ".merge(" not in line and "pd.merge(" not in line:
        return ""
    both = [f for f, columns in used.items() if name in columns]
    if len(both) < 2:
        return ""
    left, right = both[0], both[1]
    if re.search(rf"\b{re.escape(right)}\s*\.merge\(\s*{re.escape(left)}\b", line):
        left, right = right, left
    return (
        f"Both {left} and {right} have a column {name!r}, so the merge has no {name!r}: it holds "
        f"{name + '_x'!r} (from {left}) and {name + '_y'!r} (from {right}). Use "
        f"{name + '_y'!r} for the {name!r} of {right}."
    )


# -- an attribute of another pandas type, and a merge under a new name --------------------------
_OWN_TYPES = ("Series", "DataFrame", "DataFrameGroupBy", "SeriesGroupBy")


def _pandas_attribute(kind: str, attr: str) -> tuple[str, bool]:
    """Where *attr* lives for an object of type *kind* that lacks it ('' when nowhere), and
    whether it is called there (a method) rather than read (a property)."""
    import pandas as pd  # loaded only for an AttributeError on a pandas object
    from pandas.core.groupby import DataFrameGroupBy, SeriesGroupBy

    holders: list[tuple[str, object]] = []
    if kind in ("Series", "SeriesGroupBy"):
        # Instances: their methods are bound (callable), their properties are values.
        text = pd.Series(["a"]).str
        dates = pd.Series(pd.to_datetime(["2020-01-01"])).dt
        codes = pd.Series(["a"], dtype="category").cat
        holders += [("str", text), ("dt", dates), ("cat", codes)]
    if kind == "DataFrameGroupBy":
        holders.append(("SeriesGroupBy", SeriesGroupBy))
    if kind == "SeriesGroupBy":
        holders.append(("DataFrameGroupBy", DataFrameGroupBy))
    if kind in ("Series", "SeriesGroupBy", "DataFrameGroupBy"):
        holders.append(("DataFrame", pd.DataFrame))
    if kind in ("DataFrame", "DataFrameGroupBy"):
        holders.append(("Series", pd.Series))
    for where, holder in holders:
        if hasattr(holder, attr):
            value = getattr(holder, attr)
            return where, callable(value) and not isinstance(value, type)
    return "", False


def other_kind_attribute(kind: str, attr: str) -> str:
    """A hint for `'Series' object has no attribute 'join'` when *attr* is a pandas method
    of another type (an accessor's, a DataFrame's, a Series'); "" when it is none."""
    if kind not in _OWN_TYPES:
        return ""
    where, called = _pandas_attribute(kind, attr)
    use = f"{attr}(...)" if called else attr
    what = "method" if called else "attribute"
    a_what = "a method" if called else "an attribute"
    if where in ("str", "dt", "cat"):
        text = (
            f"A {kind} has no `.{attr}`; `{attr}` is {a_what} of the `.{where}` accessor, "
            f"for each value: s.{where}.{use}."
        )
        if attr == "join":  # str.join's receiver is the separator
            text += " To join all values into one string: ', '.join(s.astype(str))."
        return text
    if where == "DataFrame":
        return (
            f"`{attr}` is a DataFrame {what}, and this is a {kind} (one column). Keep the "
            f"frame (df[['a', 'b']] instead of df['a']), or make one: s.to_frame().{use}."
        )
    if where == "Series":
        return (
            f"`{attr}` is a Series {what}, and this is a {kind}: select one column first, "
            f"e.g. df['column'].{use}."
        )
    if where == "SeriesGroupBy":
        return f"`{attr}` works on one column of the groups: df.groupby('a')['b'].{use}."
    if where == "DataFrameGroupBy":
        return f"`{attr}` works on the groups of a frame: df.groupby('a')[['b', 'c']].{use}."
    return ""


def new_name(taken: Iterable[str], base: str = "merged") -> str:
    """A name for a derived frame that rebinds nothing in *taken* (a given frame stays)."""
    names = set(taken)
    return next(n for n in (base, *(f"{base}{i}" for i in range(2, 100))) if n not in names)


def merge_into_new(left: str, right: str, on: str | None, taken: Iterable[str]) -> tuple[str, str]:
    """The merge a hint suggests and the name it binds: a new one, never *left* or *right*."""
    name = new_name(taken)
    key = f", on={on!r}" if on else ", on=<a column both have>"
    return name, f"{name} = {left}.merge({right}{key})"


# pandas 2 refuses a tuple of columns on a groupby; on a frame it is one (missing) key.
_TUPLE_KEY = re.compile(r"subset columns with a tuple|^KeyError: \((?:'[^']*'|\"[^\"]*\"),")


def tuple_columns(line: str, code: str, last: str) -> str:
    """`x['a', 'b']` where several columns were meant: the same selection with a list,
    `x[['a', 'b']]`, written from the failing *line* (else the first such one of *code*)."""
    if not _TUPLE_KEY.search(last):
        return ""
    for source in (line.strip(), code):
        tree = code_tree(source)
        for node in ast.walk(tree) if tree is not None else ():
            if not isinstance(node, ast.Subscript) or not isinstance(node.slice, ast.Tuple):
                continue
            key = node.slice
            indexer = node.value.attr if isinstance(node.value, ast.Attribute) else ""
            if len(key.elts) < 2 or indexer in ("loc", "iloc", "at", "iat"):
                continue  # in .loc, a row and a column: a tuple is meant there
            if not all(isinstance(e, ast.Constant) and isinstance(e.value, str) for e in key.elts):
                continue
            fixed = ast.Subscript(value=node.value, slice=ast.List(elts=key.elts), ctx=node.ctx)
            return (
                f"`{ast.unparse(node)}` asks for one key, a tuple: select several columns "
                f"with a list in the brackets, {ast.unparse(fixed)}."
            )
    return ""


def column_as_value(name: str, line: str, used: Mapping[str, Mapping[str, str]]) -> str:
    """`df[df['macro'] == 'unemp']` where *name* ('macro') is no column and the value
    ('unemp') is a column of that frame: the data is that column itself (wide, not long)."""
    tree = code_tree(line.strip())
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.Compare) or len(node.ops) != 1:
            continue
        left, right = node.left, node.comparators[0]
        if not isinstance(node.ops[0], ast.Eq | ast.NotEq | ast.In):
            continue
        if not (
            isinstance(left, ast.Subscript)
            and isinstance(left.value, ast.Name)
            and isinstance(left.slice, ast.Constant)
            and left.slice.value == name
        ):
            continue
        frame = left.value.id
        values = right.elts if isinstance(right, ast.List | ast.Tuple | ast.Set) else [right]
        columns = [
            v.value
            for v in values
            if isinstance(v, ast.Constant) and v.value in used.get(frame, {})
        ]
        if columns:
            picked = ", ".join(f"{frame}[{c!r}]" for c in columns)
            return (
                f"There is no column {name!r} in {frame}, and {columns[0]!r} is not a value to "
                f"find in one: it is a column of {frame} itself. Use {picked} directly, with "
                "no filter on rows."
            )
    return ""


_INT_KEY = re.compile(r"^KeyError: (?P<key>-?\d+)$")


def positional_key(line: str, last: str, frames: Iterable[str] = ()) -> str:
    """`s[0]` on a Series whose index has no label 0 (pandas 2 reads an integer in brackets
    as a label, not a position): the same lookup by position, `s.iloc[0]`; on one of the
    *frames*, `df[0]` is a column by that name: by position, `df.iloc[:, 0]`."""
    found = _INT_KEY.match(last.strip())
    if found is None:
        return ""
    key, frame_names = int(found["key"]), set(frames)
    tree = code_tree(line.strip())
    for node in ast.walk(tree) if tree is not None else ():
        if not isinstance(node, ast.Subscript) or isinstance(node.value, ast.Attribute):
            continue  # `.loc[0]`, `.iloc[0]`, `df.col[0]`: not the plain form this hint is for
        index, sign = node.slice, 1
        if isinstance(index, ast.UnaryOp) and isinstance(index.op, ast.USub):
            index, sign = index.operand, -1
        number = index.value if isinstance(index, ast.Constant) else None
        if isinstance(number, int) and not isinstance(number, bool) and sign * number == key:
            name = ast.unparse(node.value)
            if name in frame_names:
                return (
                    f"`{ast.unparse(node)}` looks up the column named {key}, which {name} does "
                    f"not have. By position, the column is {name}.iloc[:, {key}]."
                )
            return (
                f"`{ast.unparse(node)}` looks up the index label {key}, which {name} does not "
                f"have: pandas reads a number in brackets as a label. By position, write "
                f"{name}.iloc[{key}]."
            )
    return ""
