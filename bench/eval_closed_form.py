"""Closed-form data-analysis questions over CSV files, on data nothing else here uses.

Written for issue 35 as a fresh held-out set (`--tasks closed_form`, `cf_*`): questions in
the style of public closed-form data-analysis benchmarks (a CSV file, a question that may
need a statistical test or a model, one or more answers in a fixed `@name[value]` format).
The data are the datasets that ship inside statsmodels and scikit-learn (read offline from
the installed packages); the truths are computed here with pandas, scipy and statsmodels.
None of these tasks was looked at while the aids were built.
"""

from __future__ import annotations

import functools
import os
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from eval_public import ANSWER, AnswerFormat, Data
from eval_public import csv_path as _public_csv_path
from eval_tasks import Task


@functools.cache
def _dataset(name: str) -> pd.DataFrame:
    if name == "wine":
        from sklearn.datasets import load_wine

        frame: pd.DataFrame = load_wine(as_frame=True).frame
        return frame.rename(columns={"target": "cultivar"})
    import statsmodels.datasets as datasets

    frame = getattr(datasets, name).load_pandas().data
    return frame


def table(name: str) -> pd.DataFrame:
    """A fresh copy of the bundled dataset *name*."""
    return _dataset(name).copy()


def csv_path(name: str) -> Path:
    """Where the CSV of *name* is written (beside the public set's files)."""
    return _public_csv_path(f"cf_{name}")


def _csv(name: str) -> Callable[[Data], list[Any]]:
    """Writes the dataset as CSV (the model reads it itself) and injects nothing."""

    def inject(d: Data) -> list[Any]:
        target = csv_path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        fd, aside = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
        with os.fdopen(fd, "w", newline="") as handle:
            table(name).to_csv(handle, index=False)
        os.replace(aside, target)
        return []

    return inject


def _answers(*parts: tuple[str, float | str, int]) -> Callable[[Data], dict[str, Any]]:
    """The truth of a question with one or more answers: `@answer`, `@answer:2`, ..."""

    def truth(d: Data) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for i, (name, value, decimals) in enumerate(parts):
            key = ANSWER if i == 0 else f"{ANSWER}:{i + 1}"
            expected = round(value, decimals) if isinstance(value, float) else value
            out[key] = AnswerFormat(name, expected, decimals)
        return out

    return truth


def _fmt(*parts: tuple[str, str]) -> str:
    listed = ", ".join(f"@{name}[{name}_value]" for name, _ in parts)
    whats = "; ".join(f"{name}_value is {what}" for name, what in parts)
    return f" Answer format: {listed}, where {whats}."


def _ols_slope() -> float:
    d = table("engel")
    slope, _intercept = np.polyfit(d["income"], d["foodexp"], 1)
    return float(slope)


def _stackloss_r2() -> float:
    import statsmodels.api as sm

    d = table("stackloss")
    fit = sm.OLS(d["STACKLOSS"], sm.add_constant(d[["AIRFLOW", "WATERTEMP", "ACIDCONC"]])).fit()
    return float(fit.rsquared)


def _spector_t() -> tuple[float, float]:
    from scipy import stats

    d = table("spector")
    result = stats.ttest_ind(d.loc[d.PSI == 1, "GPA"], d.loc[d.PSI == 0, "GPA"], equal_var=False)
    return float(result.statistic), float(result.pvalue)


def _longley_r_p() -> tuple[float, str]:
    from scipy import stats

    d = table("longley")
    r, p = stats.pearsonr(d["GNP"], d["UNEMP"])
    return float(r), "yes" if p < 0.05 else "no"


def _macro_growth() -> float:
    d = table("macrodata")
    return float(d["realgdp"].pct_change().mean() * 100)


def _anes_z() -> int:
    d = table("anes96")
    z = (d["age"] - d["age"].mean()) / d["age"].std(ddof=0)
    return int((z.abs() > 2).sum())


def _fair_diff() -> float:
    d = table("fair")
    return float(d.loc[d.children > 0, "affairs"].mean() - d.loc[d.children == 0, "affairs"].mean())


def _wine_above() -> int:
    d = table("wine")
    return int((d["alcohol"] > d["alcohol"].median()).sum())


CLOSED_FORM_TASKS: list[Task] = [
    Task(
        "cf_engel_slope",
        "closed-form",
        _csv("engel"),
        [
            f"{csv_path('engel')} holds household income and food expenditure. Fit a linear "
            "regression of foodexp on income (with an intercept). What is the slope?"
            + _fmt(("slope", "rounded to 4 decimals"))
        ],
        lambda d: _answers(("slope", _ols_slope(), 4))(d),
    ),
    Task(
        "cf_stackloss_r2",
        "closed-form",
        _csv("stackloss"),
        [
            f"Using {csv_path('stackloss')}, fit an ordinary least squares model of STACKLOSS "
            "on AIRFLOW, WATERTEMP and ACIDCONC with an intercept. Report its R-squared."
            + _fmt(("r_squared", "rounded to 3 decimals"))
        ],
        lambda d: _answers(("r_squared", _stackloss_r2(), 3))(d),
    ),
    Task(
        "cf_spector_ttest",
        "closed-form",
        _csv("spector"),
        [
            f"In {csv_path('spector')}, compare the GPA of students with PSI equal to 1 and "
            "with PSI equal to 0 using Welch's t-test (unequal variances), PSI 1 as the first "
            "group. Report the t statistic and the p-value."
            + _fmt(("t_stat", "rounded to 3 decimals"), ("p_value", "rounded to 3 decimals"))
        ],
        lambda d: _answers(("t_stat", _spector_t()[0], 3), ("p_value", _spector_t()[1], 3))(d),
    ),
    Task(
        "cf_longley_corr",
        "closed-form",
        _csv("longley"),
        [
            f"{csv_path('longley')} holds US macroeconomic data by year. What is the Pearson "
            "correlation between GNP and UNEMP, and is it significant at the 0.05 level?"
            + _fmt(("r", "rounded to 3 decimals"), ("significant", "yes or no"))
        ],
        lambda d: _answers(("r", _longley_r_p()[0], 3), ("significant", _longley_r_p()[1], 0))(d),
    ),
    Task(
        "cf_macro_growth",
        "closed-form",
        _csv("macrodata"),
        [
            f"Using the quarterly data in {csv_path('macrodata')}, what is the mean "
            "quarter-over-quarter growth of realgdp, in percent?"
            + _fmt(("growth", "a percentage rounded to 3 decimals, without the % sign"))
        ],
        lambda d: _answers(("growth", _macro_growth(), 3))(d),
    ),
    Task(
        "cf_macro_peak_year",
        "closed-form",
        _csv("macrodata"),
        [
            f"In {csv_path('macrodata')}, in which year was the quarterly unemployment rate "
            "(unemp) at its highest?" + _fmt(("year", "an integer"))
        ],
        lambda d: _answers(
            ("year", float(table("macrodata").loc[table("macrodata")["unemp"].idxmax(), "year"]), 0)
        )(d),
    ),
    Task(
        "cf_anes_age_outliers",
        "closed-form",
        _csv("anes96"),
        [
            f"{csv_path('anes96')} is a 1996 election survey. Standardise the age column into "
            "z-scores with the population standard deviation. How many respondents have an "
            "absolute z-score above 2?" + _fmt(("n_outliers", "an integer"))
        ],
        lambda d: _answers(("n_outliers", float(_anes_z()), 0))(d),
    ),
    Task(
        "cf_fair_children",
        "closed-form",
        _csv("fair"),
        [
            f"In {csv_path('fair')}, what is the mean of affairs for respondents with children "
            "minus the mean for those without children (children equal to 0)?"
            + _fmt(("difference", "rounded to 3 decimals"))
        ],
        lambda d: _answers(("difference", _fair_diff(), 3))(d),
    ),
    Task(
        "cf_fair_occupation",
        "closed-form",
        _csv("fair"),
        [
            f"Using {csv_path('fair')}, which occupation code has the highest mean "
            "rate_marriage, and what is that mean?"
            + _fmt(("occupation", "an integer"), ("mean_rating", "rounded to 2 decimals"))
        ],
        lambda d: _answers(
            (
                "occupation",
                float(table("fair").groupby("occupation")["rate_marriage"].mean().idxmax()),
                0,
            ),
            (
                "mean_rating",
                float(table("fair").groupby("occupation")["rate_marriage"].mean().max()),
                2,
            ),
        )(d),
    ),
    Task(
        "cf_wine_above_median",
        "closed-form",
        _csv("wine"),
        [
            f"{csv_path('wine')} lists wines with their chemical measurements. How many wines "
            "have an alcohol value strictly above the median alcohol?"
            + _fmt(("count", "an integer"))
        ],
        lambda d: _answers(("count", float(_wine_above()), 0))(d),
    ),
]


def _read(name: str) -> str:
    return f"import pandas as pd\ndf = pd.read_csv({str(csv_path(name))!r})\n"


# Reference solutions (never shown to a model): tests/eval/test_public_tasks.py runs each
# through the real agent loop, so every truth above is reachable and checked as asked.
_SOLUTIONS = {
    "cf_engel_slope": _read("engel")
    + "import numpy as np\nslope = np.polyfit(df['income'], df['foodexp'], 1)[0]\n"
    "final_answer(f'@slope[{slope:.4f}]')",
    "cf_stackloss_r2": _read("stackloss") + "from sklearn.linear_model import LinearRegression\n"
    "X, y = df[['AIRFLOW', 'WATERTEMP', 'ACIDCONC']], df['STACKLOSS']\n"
    "r2 = LinearRegression().fit(X, y).score(X, y)\nfinal_answer(f'@r_squared[{r2:.3f}]')",
    "cf_spector_ttest": _read("spector") + "from scipy import stats\n"
    "t, p = stats.ttest_ind(df[df.PSI == 1].GPA, df[df.PSI == 0].GPA, equal_var=False)\n"
    "final_answer(f'@t_stat[{t:.3f}], @p_value[{p:.3f}]')",
    "cf_longley_corr": _read("longley")
    + "from scipy.stats import pearsonr\nr, p = pearsonr(df['GNP'], df['UNEMP'])\n"
    "final_answer(f\"@r[{r:.3f}], @significant[{'yes' if p < 0.05 else 'no'}]\")",
    "cf_macro_growth": _read("macrodata")
    + "g = df['realgdp'].pct_change().mean() * 100\nfinal_answer(f'@growth[{g:.3f}]')",
    "cf_macro_peak_year": _read("macrodata")
    + "final_answer(f\"@year[{int(df.loc[df['unemp'].idxmax(), 'year'])}]\")",
    "cf_anes_age_outliers": _read("anes96")
    + "from scipy.stats import zscore\nn = int((abs(zscore(df['age'])) > 2).sum())\n"
    "final_answer(f'@n_outliers[{n}]')",
    "cf_fair_children": _read("fair")
    + "diff = df[df.children > 0].affairs.mean() - df[df.children == 0].affairs.mean()\n"
    "final_answer(f'@difference[{diff:.3f}]')",
    "cf_fair_occupation": _read("fair") + "m = df.groupby('occupation')['rate_marriage'].mean()\n"
    "final_answer(f'@occupation[{int(m.idxmax())}], @mean_rating[{m.max():.2f}]')",
    "cf_wine_above_median": _read("wine")
    + "final_answer(f\"@count[{int((df['alcohol'] > df['alcohol'].median()).sum())}]\")",
}
for _task in CLOSED_FORM_TASKS:
    _task.solution = [_SOLUTIONS[_task.name]]
