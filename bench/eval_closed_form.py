"""Closed-form data-analysis questions over CSV files, on data nothing else here uses.

Written for issue 35 as a fresh held-out set (`--tasks closed_form`, `cf_*`): questions in
the style of public closed-form data-analysis benchmarks (a CSV file, a question that may
need a statistical test or a model, one or more answers in a fixed `@name[value]` format).
The data are the datasets that ship inside statsmodels and scikit-learn (read offline from
the installed packages); the truths are computed here with pandas, scipy and statsmodels.

Two parts: `closed_form` (`cf_*`), run first in session s12 and then looked at (the
`answer_format` policy and the NumPy-scalar answer came from what it showed), and
`closed_form_holdout` (`ch_*`), written before any of its tasks was run and read only for
the final figures.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from eval_public import Data, answers, write_csv
from eval_public import csv_path as _public_csv_path
from eval_tasks import Task


@functools.cache
def _dataset(name: str) -> pd.DataFrame:
    if name in ("wine", "breast_cancer", "diabetes"):
        from sklearn import datasets as bundled

        frame: pd.DataFrame = getattr(bundled, f"load_{name}")(as_frame=True).frame
        renamed = {"wine": "cultivar", "breast_cancer": "malignant", "diabetes": "progression"}
        frame = frame.rename(columns={"target": renamed[name]})
        if name == "breast_cancer":  # sklearn's 0 is malignant
            frame["malignant"] = 1 - frame["malignant"]
        return frame
    import statsmodels.datasets as datasets

    frame = getattr(datasets, name).load_pandas().data
    return frame


def table(name: str) -> pd.DataFrame:
    """A fresh copy of the bundled dataset *name*."""
    return _dataset(name).copy()


def csv_path(name: str) -> Path:
    """Where the CSV of *name* is written (beside the public set's files)."""
    return _public_csv_path(f"cf_{name}")


def _csv(name: str, load: Callable[[str], pd.DataFrame] = table) -> Callable[[Data], list[Any]]:
    """Writes the dataset as CSV (the model reads it itself) and injects nothing; *load*
    gives the frame of a name."""

    def inject(d: Data) -> list[Any]:
        write_csv(load(name), csv_path(name))
        return []

    return inject


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
        lambda d: answers(("slope", _ols_slope(), 4)),
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
        lambda d: answers(("r_squared", _stackloss_r2(), 3)),
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
        lambda d: answers(("t_stat", _spector_t()[0], 3), ("p_value", _spector_t()[1], 3)),
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
        lambda d: answers(("r", _longley_r_p()[0], 3), ("significant", _longley_r_p()[1], 0)),
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
        lambda d: answers(("growth", _macro_growth(), 3)),
    ),
    Task(
        "cf_macro_peak_year",
        "closed-form",
        _csv("macrodata"),
        [
            f"In {csv_path('macrodata')}, in which year was the quarterly unemployment rate "
            "(unemp) at its highest?" + _fmt(("year", "an integer"))
        ],
        lambda d: answers(
            ("year", float(table("macrodata").loc[table("macrodata")["unemp"].idxmax(), "year"]), 0)
        ),
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
        lambda d: answers(("n_outliers", float(_anes_z()), 0)),
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
        lambda d: answers(("difference", _fair_diff(), 3)),
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
        lambda d: answers(
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
        ),
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
        lambda d: answers(("count", float(_wine_above()), 0)),
    ),
]


def _grunfeld_top() -> tuple[str, float]:
    totals = table("grunfeld").groupby("firm")["invest"].sum()
    return str(totals.idxmax()), float(totals.max())


def _cancer_t() -> tuple[float, str]:
    from scipy import stats

    d = table("breast_cancer")
    t, p = stats.ttest_ind(
        d.loc[d.malignant == 1, "mean radius"], d.loc[d.malignant == 0, "mean radius"]
    )
    return float(t), "yes" if p < 0.01 else "no"


def _diabetes_fit() -> tuple[float, float]:
    import statsmodels.api as sm

    d = table("diabetes")
    fit = sm.OLS(d["progression"], sm.add_constant(d[["bmi", "bp"]])).fit()
    return float(fit.params["bmi"]), float(fit.rsquared)


def _cpunish_ratio() -> float:
    d = table("cpunish")
    return float(
        d.loc[d.SOUTH == 1, "EXECUTIONS"].mean() / d.loc[d.SOUTH == 0, "EXECUTIONS"].mean()
    )


def _sunspot_decade() -> int:
    d = table("sunspots")
    means = d.groupby((d["YEAR"] // 10 * 10).astype(int))["SUNACTIVITY"].mean()
    return int(means.idxmax())


CLOSED_FORM_HOLDOUT_TASKS: list[Task] = [
    Task(
        "ch_grunfeld_top_firm",
        "closed-form",
        _csv("grunfeld"),
        [
            f"{csv_path('grunfeld')} holds yearly investment data of US firms. Which firm has "
            "the largest total invest over all years, and what is that total?"
            + _fmt(
                ("firm", "the firm's name as written in the data"),
                ("total", "rounded to 1 decimal"),
            )
        ],
        lambda d: answers(("firm", _grunfeld_top()[0], 0), ("total", _grunfeld_top()[1], 1)),
    ),
    Task(
        "ch_grunfeld_spearman",
        "closed-form",
        _csv("grunfeld"),
        [
            f"Using {csv_path('grunfeld')}, compute the Spearman rank correlation between value "
            "and invest." + _fmt(("rho", "rounded to 3 decimals"))
        ],
        lambda d: answers(
            ("rho", float(table("grunfeld")[["value", "invest"]].corr("spearman").iloc[0, 1]), 3)
        ),
    ),
    Task(
        "ch_cancer_radius_ttest",
        "closed-form",
        _csv("breast_cancer"),
        [
            f"In {csv_path('breast_cancer')} (malignant is 1 for a malignant tumour), run an "
            "independent two-sample t-test with equal variances of 'mean radius' between "
            "malignant (first group) and benign tumours. Report the t statistic and whether "
            "the difference is significant at the 0.01 level."
            + _fmt(("t", "rounded to 2 decimals"), ("significant", "yes or no"))
        ],
        lambda d: answers(("t", _cancer_t()[0], 2), ("significant", _cancer_t()[1], 0)),
    ),
    Task(
        "ch_diabetes_ols",
        "closed-form",
        _csv("diabetes"),
        [
            f"{csv_path('diabetes')} holds standardised patient measurements and a disease "
            "progression score. Fit a linear regression of progression on bmi and bp with an "
            "intercept. Report the coefficient of bmi and the model's R-squared."
            + _fmt(("bmi_coef", "rounded to 2 decimals"), ("r2", "rounded to 3 decimals"))
        ],
        lambda d: answers(("bmi_coef", _diabetes_fit()[0], 2), ("r2", _diabetes_fit()[1], 3)),
    ),
    Task(
        "ch_strikes_median",
        "closed-form",
        _csv("strikes"),
        [
            f"In {csv_path('strikes')}, what is the median duration of the strikes that began "
            "when iprod (industrial production) was above 0?"
            + _fmt(("median_duration", "rounded to 1 decimal"))
        ],
        lambda d: answers(
            (
                "median_duration",
                float(table("strikes").query("iprod > 0")["duration"].median()),
                1,
            )
        ),
    ),
    Task(
        "ch_cpunish_south_ratio",
        "closed-form",
        _csv("cpunish"),
        [
            f"{csv_path('cpunish')} lists US states with their executions. What is the mean of "
            "EXECUTIONS for southern states (SOUTH equal to 1) divided by the mean for the "
            "other states?" + _fmt(("ratio", "rounded to 2 decimals"))
        ],
        lambda d: answers(("ratio", _cpunish_ratio(), 2)),
    ),
    Task(
        "ch_star98_asian_schools",
        "closed-form",
        _csv("star98"),
        [
            f"Using {csv_path('star98')}, how many school districts have PERASIAN (the percent "
            "of Asian students) above 10?" + _fmt(("n_districts", "an integer"))
        ],
        lambda d: answers(("n_districts", float((table("star98")["PERASIAN"] > 10).sum()), 0)),
    ),
    Task(
        "ch_sunspots_decade",
        "closed-form",
        _csv("sunspots"),
        [
            f"{csv_path('sunspots')} holds yearly sunspot activity. Which decade (its first "
            "year, e.g. 1950 for 1950-1959) has the highest mean SUNACTIVITY?"
            + _fmt(("decade", "an integer"))
        ],
        lambda d: answers(("decade", float(_sunspot_decade()), 0)),
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
_SOLUTIONS |= {
    "ch_grunfeld_top_firm": _read("grunfeld") + "t = df.groupby('firm')['invest'].sum()\n"
    "final_answer(f'@firm[{t.idxmax()}], @total[{t.max():.1f}]')",
    "ch_grunfeld_spearman": _read("grunfeld")
    + "from scipy.stats import spearmanr\nrho = spearmanr(df['value'], df['invest'])[0]\n"
    "final_answer(f'@rho[{rho:.3f}]')",
    "ch_cancer_radius_ttest": _read("breast_cancer") + "from scipy.stats import ttest_ind\n"
    "t, p = ttest_ind(df[df.malignant == 1]['mean radius'], df[df.malignant == 0]['mean radius'])\n"
    "final_answer(f\"@t[{t:.2f}], @significant[{'yes' if p < 0.01 else 'no'}]\")",
    "ch_diabetes_ols": _read("diabetes") + "from sklearn.linear_model import LinearRegression\n"
    "X, y = df[['bmi', 'bp']], df['progression']\nm = LinearRegression().fit(X, y)\n"
    "final_answer(f'@bmi_coef[{m.coef_[0]:.2f}], @r2[{m.score(X, y):.3f}]')",
    "ch_strikes_median": _read("strikes")
    + "final_answer(f\"@median_duration[{df[df.iprod > 0]['duration'].median():.1f}]\")",
    "ch_cpunish_south_ratio": _read("cpunish")
    + "r = df[df.SOUTH == 1].EXECUTIONS.mean() / df[df.SOUTH == 0].EXECUTIONS.mean()\n"
    "final_answer(f'@ratio[{r:.2f}]')",
    "ch_star98_asian_schools": _read("star98")
    + "final_answer(f\"@n_districts[{int((df['PERASIAN'] > 10).sum())}]\")",
    "ch_sunspots_decade": _read("sunspots")
    + "m = df.groupby(df['YEAR'] // 10 * 10)['SUNACTIVITY'].mean()\n"
    "final_answer(f'@decade[{int(m.idxmax())}]')",
}
for _task in [*CLOSED_FORM_TASKS, *CLOSED_FORM_HOLDOUT_TASKS]:
    _task.solution = [_SOLUTIONS[_task.name]]
