"""Hints for two pandas errors of shape, read from the error and the failing line.

- A whole-Series reduction (`.idxmax()`, `.max()`, …) gave one value where one per group
  was meant, and the next method call fails on that value (`'tuple' object has no
  attribute 'to_dict'`).
- A column both sides of a merge have is missing from the merge's result: pandas named it
  `col_x` and `col_y`.

Each returns one line, or "" when the error is not of its class.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

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
