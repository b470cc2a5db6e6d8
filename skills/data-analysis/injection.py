"""Helpers the `data-analysis` skill injects when activated (EDA on pandas frames)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import pandas as pd

from cave_tui.runtime import Function, Type, Variable

EDA_THRESHOLDS: dict[str, float] = {
    "high_missing_pct": 20.0,  # a column missing more than this share is flagged
    "strong_correlation": 0.7,  # |r| at or above this is flagged
    "iqr_k": 1.5,  # Tukey fence multiplier for outliers
    "outlier_pct": 1.0,  # flag a column when more than this share of rows are outliers
    "skew": 2.0,  # |skewness| at or above this is flagged
}


@dataclass
class Finding:
    """Something notable about a dataset: what kind, which columns, the evidence."""

    kind: str  # missing | constant | identifier | correlation | outliers | skew
    columns: list[str] = field(default_factory=list)
    detail: str = ""

    def __str__(self) -> str:
        return f"[{self.kind}] {', '.join(self.columns)}: {self.detail}"


def _numeric(df: pd.DataFrame) -> pd.DataFrame:
    return df.select_dtypes(include="number").select_dtypes(exclude="bool")


def _fmt(value: object) -> object:
    if isinstance(value, float | np.floating):
        return round(float(value), 3)
    return value


def profile(df: pd.DataFrame) -> pd.DataFrame:
    """One row per column: dtype, non-null, missing %, distinct, top value, numeric stats."""
    rows = []
    n = len(df)
    for col in df.columns:
        s = df[col]
        non_null = int(s.notna().sum())
        row: dict[str, object] = {
            "column": str(col),
            "dtype": str(s.dtype),
            "non_null": non_null,
            "missing_pct": round(100 * (n - non_null) / n, 2) if n else 0.0,
            "distinct": int(s.nunique(dropna=True)),
        }
        counts = s.value_counts(dropna=True)
        row["top"] = _fmt(counts.index[0]) if len(counts) else None
        if pd.api.types.is_numeric_dtype(s) and not pd.api.types.is_bool_dtype(s):
            clean = s.dropna()
            row.update(
                mean=_fmt(clean.mean()) if len(clean) else None,
                std=_fmt(clean.std()) if len(clean) > 1 else None,
                min=_fmt(clean.min()) if len(clean) else None,
                median=_fmt(clean.median()) if len(clean) else None,
                max=_fmt(clean.max()) if len(clean) else None,
            )
        rows.append(row)
    return pd.DataFrame(rows).set_index("column")


def missing_report(df: pd.DataFrame) -> pd.DataFrame:
    """Columns with missing values, worst first: count and percentage."""
    missing = df.isna().sum()
    missing = missing[missing > 0].sort_values(ascending=False)
    pct = (100 * missing / max(len(df), 1)).round(2)
    return pd.DataFrame({"missing": missing.astype(int), "missing_pct": pct})


def top_correlations(df: pd.DataFrame, n: int = 10, method: str = "pearson") -> pd.DataFrame:
    """The *n* strongest pairs of numeric columns by |correlation| (pairwise complete)."""
    corr = _numeric(df).corr(method=method)
    cols = list(corr.columns)
    pairs = []
    for i, a in enumerate(cols):
        for b in cols[i + 1 :]:
            r = corr.loc[a, b]
            if pd.notna(r):
                pairs.append({"a": a, "b": b, "r": round(float(r), 3)})
    out = pd.DataFrame(pairs, columns=["a", "b", "r"])
    if out.empty:
        return out
    order = out["r"].abs().sort_values(ascending=False).index
    return out.loc[order].head(n).reset_index(drop=True)


def outliers(df: pd.DataFrame, column: str, k: float | None = None) -> pd.DataFrame:
    """Rows whose *column* lies outside the Tukey fences Q1 - k*IQR and Q3 + k*IQR."""
    if column not in df.columns:
        raise KeyError(f"no column {column!r}; columns are {list(df.columns)}")
    s = df[column]
    if not pd.api.types.is_numeric_dtype(s):
        raise TypeError(f"column {column!r} is {s.dtype}, not numeric")
    k = EDA_THRESHOLDS["iqr_k"] if k is None else k
    q1, q3 = s.quantile(0.25), s.quantile(0.75)
    iqr = q3 - q1
    low, high = q1 - k * iqr, q3 + k * iqr
    return df[(s < low) | (s > high)]


def group_summary(
    df: pd.DataFrame,
    by: str | list[str],
    value: str,
    aggs: Sequence[str] = ("count", "mean", "median", "min", "max"),
) -> pd.DataFrame:
    """*value* aggregated per group of *by* (missing values skipped), largest mean first."""
    table = df.groupby(by, dropna=False)[value].agg(list(aggs)).round(3)
    if "mean" in table.columns:
        table = table.sort_values("mean", ascending=False)
    return table


def find_issues(df: pd.DataFrame) -> list[Finding]:
    """Notable problems and patterns, using the cut-offs in `EDA_THRESHOLDS`."""
    t = EDA_THRESHOLDS
    found: list[Finding] = []
    n = len(df)
    if n == 0:
        return [Finding("empty", [], "the frame has no rows")]
    for col, row in missing_report(df).iterrows():
        if row["missing_pct"] > t["high_missing_pct"]:
            found.append(
                Finding("missing", [str(col)], f"{row['missing_pct']}% missing ({row['missing']})")
            )
    for col in df.columns:
        s = df[col]
        distinct = s.nunique(dropna=True)
        if distinct <= 1:
            found.append(Finding("constant", [str(col)], f"{distinct} distinct value(s)"))
        elif distinct == n and not pd.api.types.is_float_dtype(s) and n >= 20:
            found.append(Finding("identifier", [str(col)], "every value is unique"))
    for _, pair in top_correlations(df, n=50).iterrows():
        if abs(pair["r"]) >= t["strong_correlation"]:
            found.append(Finding("correlation", [pair["a"], pair["b"]], f"r = {pair['r']:+.3f}"))
    for col in _numeric(df).columns:
        s = df[col].dropna()
        if s.nunique() < 3:
            continue
        count = len(outliers(df, col))
        pct = 100 * count / n
        if pct > t["outlier_pct"]:
            found.append(
                Finding("outliers", [str(col)], f"{count} rows ({pct:.1f}%) outside the fences")
            )
        skew = s.skew()
        if pd.notna(skew) and abs(skew) >= t["skew"]:
            found.append(Finding("skew", [str(col)], f"skewness {skew:+.2f}"))
    return found


def eda_report(df: pd.DataFrame, name: str = "df") -> str:
    """A compact text report: shape, column types, profile and notable issues."""
    kinds = df.dtypes.map(lambda d: "numeric" if pd.api.types.is_numeric_dtype(d) else "other")
    lines = [
        f"{name}: {len(df):,} rows x {df.shape[1]} columns "
        f"({int((kinds == 'numeric').sum())} numeric, {int((kinds == 'other').sum())} other)",
        "",
    ]
    with pd.option_context("display.width", 160, "display.max_columns", 20):
        lines.append(profile(df).head(40).to_string())
    if df.shape[1] > 40:
        lines.append(f"(… {df.shape[1] - 40} more columns; call profile(df) to see them)")
    issues = find_issues(df)
    lines.append("")
    lines.append("Notable:" if issues else "Notable: nothing flagged.")
    lines.extend(f"- {f}" for f in issues[:20])
    if len(issues) > 20:
        lines.append(f"- … {len(issues) - 20} more (call find_issues(df))")
    missing = int(df.isna().sum().sum())
    lines.append(f"Missing cells: {missing:,} of {df.size:,}.")
    return "\n".join(lines)


__exports__ = [
    Function(eda_report, description="Start here: a one-page text EDA report of a frame"),
    Function(profile, description="Per-column profile table (dtype, missing %, distinct, stats)"),
    Function(missing_report, description="Columns with missing values, worst first"),
    Function(top_correlations, description="Strongest numeric column pairs by |r|"),
    Function(outliers, description="Rows outside the Tukey IQR fences for one column"),
    Function(group_summary, description="Aggregate a numeric column per group"),
    Function(find_issues, description="List of Finding objects: notable problems/patterns"),
    Type(Finding, description="One notable fact: kind, columns, detail"),
    Variable("EDA_THRESHOLDS", EDA_THRESHOLDS, "Cut-offs find_issues uses (editable dict)"),
]
