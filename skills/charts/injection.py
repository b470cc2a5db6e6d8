"""Helpers the `charts` skill injects: text charts of frames and series.

Bars are Unicode block characters with eighth-of-a-cell resolution (or `#` with
`ascii=True`), each labelled with its value, so a chart reads the same in a
terminal, a log file and the model's own observation.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from typing import Any

import numpy as np
import pandas as pd

from cave_tui.runtime import Function, Type

_EIGHTHS = " ▏▎▍▌▋▊▉"
_SPARKS = "▁▂▃▄▅▆▇█"


class Chart:
    """A drawn chart. Its repr is the drawing itself, so a bare call at the end of a
    cell shows it; `str(chart)` (or `chart.text`) gives the text."""

    def __init__(self, text: str) -> None:
        self.text = text

    def __str__(self) -> str:
        return self.text

    def __repr__(self) -> str:
        return self.text

    def __eq__(self, other: object) -> bool:
        return self.text == (other.text if isinstance(other, Chart) else other)

    def __hash__(self) -> int:
        return hash(self.text)

    def splitlines(self) -> list[str]:
        return self.text.splitlines()


def _bar(fraction: float, width: int, ascii: bool) -> str:
    fraction = min(max(fraction, 0.0), 1.0)
    if ascii:
        return "#" * round(fraction * width)
    eighths = round(fraction * width * 8)
    full, rest = divmod(eighths, 8)
    return "█" * full + (_EIGHTHS[rest] if rest else "")


def _axis(ascii: bool) -> str:
    return "|" if ascii else "│"


def _number(value: float) -> str:
    if math.isnan(value):
        return "nan"
    if float(value).is_integer() and abs(value) < 1e15:
        return f"{int(value):,}"
    magnitude = abs(value)
    if magnitude >= 100:
        return f"{value:,.1f}"
    if magnitude >= 1:
        return f"{value:,.2f}"
    return f"{value:.3g}"


def _series_from(data: Any, label: str | None, value: str | None, agg: str | None) -> pd.Series:
    if isinstance(data, pd.DataFrame):
        if label is None or value is None:
            if data.shape[1] == 2 and label is None and value is None:
                label, value = str(data.columns[0]), str(data.columns[1])
            else:
                raise ValueError(
                    "bar_chart of a DataFrame needs label= and value= column names, "
                    f"e.g. bar_chart(df, {str(data.columns[0])!r}, <numeric column>, agg='mean')"
                )
        for col in (label, value):
            if col not in data.columns:
                raise KeyError(f"no column {col!r}; columns are {list(data.columns)}")
        if agg is not None:
            return data.groupby(label, dropna=False)[value].agg(agg)
        if data[label].duplicated().any():
            raise ValueError(
                f"column {label!r} has repeated labels; pass agg= ('mean', 'sum', 'count', ...)"
            )
        return pd.Series(data[value].to_numpy(), index=data[label].to_numpy(), name=value)
    if isinstance(data, pd.Series):
        return data.groupby(level=0).agg(agg) if agg is not None else data
    if isinstance(data, Mapping):
        return pd.Series(dict(data))
    raise TypeError(f"bar_chart takes a Series, a dict or a DataFrame, not {type(data).__name__}")


def bar_chart(
    data: Any,
    label: str | None = None,
    value: str | None = None,
    *,
    agg: str | None = None,
    top: int = 20,
    sort: bool = True,
    width: int = 40,
    title: str | None = None,
    ascii: bool = False,
) -> Chart:
    """Horizontal bars, one per label, each followed by its value."""
    series = _series_from(data, label, value, agg)
    numbers = pd.to_numeric(series, errors="coerce")
    missing = int(numbers.isna().sum())
    numbers = numbers.dropna()
    if sort:
        numbers = numbers.sort_values(ascending=False)
    hidden = max(0, len(numbers) - top)
    numbers = numbers.head(top)
    lines = [title] if title else []
    if numbers.empty:
        lines.append("(no numeric values to draw)")
        return Chart("\n".join(lines))
    labels = [str(i) for i in numbers.index]
    label_width = min(max(len(s) for s in labels), 24)
    peak = float(numbers.abs().max()) or 1.0
    for name, number in zip(labels, numbers.to_numpy(dtype=float), strict=True):
        shown = name if len(name) <= label_width else name[: label_width - 1] + "…"
        bar = _bar(abs(number) / peak, width, ascii)
        if number < 0:
            bar = ("-" if ascii else "░") * max(1, len(bar))
        lines.append(f"{shown.rjust(label_width)} {_axis(ascii)}{bar} {_number(number)}")
    notes = []
    if hidden:
        notes.append(f"{hidden} more not shown, top={top}")
    if missing:
        notes.append(f"{missing} missing values skipped")
    if (numbers < 0).any():
        notes.append("negative values drawn with " + ("-" if ascii else "░"))
    if notes:
        lines.append("(" + "; ".join(notes) + ")")
    return Chart("\n".join(lines))


def histogram(
    values: Iterable[float],
    bins: int = 10,
    *,
    width: int = 40,
    title: str | None = None,
    ascii: bool = False,
) -> Chart:
    """The distribution of numeric *values* as one bar per bin, with counts."""
    series = pd.to_numeric(
        pd.Series(list(values) if not isinstance(values, pd.Series) else values), errors="coerce"
    )
    missing = int(series.isna().sum())
    clean = series.dropna().to_numpy(dtype=float)
    lines = [title] if title else []
    if clean.size == 0:
        lines.append("(no numeric values to draw)")
        return Chart("\n".join(lines))
    counts, edges = np.histogram(clean, bins=bins)
    dash = " - " if ascii else " – "
    ranges = [f"{_number(edges[i])}{dash}{_number(edges[i + 1])}" for i in range(len(counts))]
    range_width = max(len(r) for r in ranges)
    peak = int(counts.max()) or 1
    for text, count in zip(ranges, counts, strict=True):
        bar = _bar(count / peak, width, ascii)
        lines.append(f"{text.rjust(range_width)} {_axis(ascii)}{bar} {int(count):,}")
    footer = f"n = {clean.size:,}"
    if missing:
        footer += f"; {missing} missing values skipped"
    lines.append(footer)
    return Chart("\n".join(lines))


def sparkline(values: Iterable[float]) -> Chart:
    """A one-line trend of *values* (missing values show as spaces), with min and max."""
    series = pd.to_numeric(
        pd.Series(list(values) if not isinstance(values, pd.Series) else values), errors="coerce"
    )
    clean = series.dropna()
    if clean.empty:
        return Chart("(no numeric values to draw)")
    low, high = float(clean.min()), float(clean.max())
    span = high - low
    marks = []
    for v in series.to_numpy(dtype=float):
        if math.isnan(v):
            marks.append(" ")
        else:
            level = 0 if span == 0 else round((v - low) / span * (len(_SPARKS) - 1))
            marks.append(_SPARKS[level])
    return Chart(f"{''.join(marks)}  min {_number(low)} max {_number(high)}")


__exports__ = [
    Function(bar_chart, description="Text bar chart of a Series/dict/DataFrame (label, value)"),
    Function(histogram, description="Text histogram of numeric values"),
    Function(sparkline, description="One-line trend of numeric values"),
    Type(Chart, description="A drawn chart; str(chart) is its text"),
]
