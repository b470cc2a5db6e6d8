"""A third closed-form part (`closed_form_fresh`, `cn_*`): nine questions written in session
s13 before any model saw them, on bundled datasets no other task uses (statsmodels' statecrime,
nile, heart, scotland, copper, ccard, elnino, china_smoking; scikit-learn's iris).

Same conventions as eval_closed_form.py: a CSV the model reads itself, one or two answers in
the `@name[value]` form, truths computed here with pandas, scipy and statsmodels, a reference
solution per task that the suite runs through the real agent loop.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any

import pandas as pd
from eval_closed_form import _csv as _write_csv
from eval_closed_form import _fmt, _read, csv_path
from eval_public import Data, answers
from eval_tasks import Task


@functools.cache
def _frame(name: str) -> pd.DataFrame:
    if name == "iris":
        from sklearn.datasets import load_iris

        bunch = load_iris(as_frame=True)
        frame: pd.DataFrame = bunch.frame
        frame["species"] = [str(bunch.target_names[t]) for t in frame.pop("target")]
        return frame
    import statsmodels.datasets as datasets

    frame = getattr(datasets, name).load_pandas().data
    if name in ("statecrime", "china_smoking"):  # the name of each row is its index
        label = "state" if name == "statecrime" else "city"
        frame = frame.rename_axis(label).reset_index()
    return frame


def table(name: str) -> pd.DataFrame:
    """A fresh copy of the dataset *name* as its CSV holds it."""
    return _frame(name).copy()


def _csv(name: str) -> Callable[[Data], list[Any]]:
    return _write_csv(name, table)


def _top_murder() -> tuple[str, float]:
    d = table("statecrime").set_index("state")["murder"]
    return str(d.idxmax()), float(d.max())


def _nile_low() -> int:
    v = table("nile")["volume"]
    return int((v < v.mean() - v.std()).sum())


def _heart() -> tuple[float, float]:
    d = table("heart")
    return float(d.loc[d.censors == 1, "age"].mean()), float(
        d.loc[d.censors == 0, "survival"].median()
    )


def _scotland() -> tuple[float, float]:
    import statsmodels.api as sm

    d = table("scotland")
    fit = sm.OLS(d["YES"], sm.add_constant(d[["COUTAX", "UNEMPF"]])).fit()
    return float(fit.params["UNEMPF"]), float(fit.rsquared_adj)


def _copper() -> tuple[float, float]:
    from scipy import stats

    d = table("copper")
    rho, p = stats.spearmanr(d["COPPERPRICE"], d["WORLDCONSUMPTION"])
    return float(rho), float(p)


def _iris() -> tuple[str, float]:
    means = table("iris").groupby("species")[["sepal width (cm)", "petal length (cm)"]].mean()
    top = str(means["sepal width (cm)"].idxmax())
    return top, float(means.loc[top, "petal length (cm)"])


def _ccard() -> tuple[float, str]:
    from scipy import stats

    d = table("ccard")
    own, rent = d.loc[d.OWNRENT == 1, "AVGEXP"], d.loc[d.OWNRENT == 0, "AVGEXP"]
    p = stats.ttest_ind(own, rent, equal_var=False).pvalue
    return float(own.mean() - rent.mean()), "yes" if p < 0.05 else "no"


def _elnino() -> tuple[int, float]:
    d = table("elnino").set_index("YEAR")
    means = d.mean(axis=1)
    return int(means.idxmax()), float(means.max())


def _smoking_chi2() -> float:
    from scipy import stats

    d = table("china_smoking")
    totals = d.drop(columns="city").sum()
    observed = [
        [totals["smoking_yes_cancer_yes"], totals["smoking_yes_cancer_no"]],
        [totals["smoking_no_cancer_yes"], totals["smoking_no_cancer_no"]],
    ]
    return float(stats.chi2_contingency(observed).statistic)


CLOSED_FORM_FRESH_TASKS: list[Task] = [
    Task(
        "cn_statecrime_top_murder",
        "closed-form",
        _csv("statecrime"),
        [
            f"{csv_path('statecrime')} lists US states (column state) with crime and social "
            "measures. Which state has the highest murder rate, and what is that rate?"
            + _fmt(("state", "the state's name as written"), ("murder", "rounded to 1 decimal"))
        ],
        lambda d: answers(("state", _top_murder()[0], 0), ("murder", _top_murder()[1], 1)),
    ),
    Task(
        "cn_nile_low_years",
        "closed-form",
        _csv("nile"),
        [
            f"{csv_path('nile')} holds the yearly flow volume of the Nile. In how many years "
            "was the volume below the mean minus one sample standard deviation?"
            + _fmt(("n_years", "an integer"))
        ],
        lambda d: answers(("n_years", float(_nile_low()), 0)),
    ),
    Task(
        "cn_heart_age_survival",
        "closed-form",
        _csv("heart"),
        [
            f"{csv_path('heart')} holds heart transplant patients: survival time, censors (1 "
            "when the patient died) and age. What is the mean age of the patients who died, "
            "and the median survival of those who did not?"
            + _fmt(
                ("mean_age", "rounded to 2 decimals"), ("median_survival", "rounded to 1 decimal")
            )
        ],
        lambda d: answers(("mean_age", _heart()[0], 2), ("median_survival", _heart()[1], 1)),
    ),
    Task(
        "cn_scotland_ols",
        "closed-form",
        _csv("scotland"),
        [
            f"Using {csv_path('scotland')}, fit an ordinary least squares regression of YES on "
            "COUTAX and UNEMPF with an intercept. Report the coefficient of UNEMPF and the "
            "adjusted R-squared."
            + _fmt(("unempf_coef", "rounded to 3 decimals"), ("adj_r2", "rounded to 3 decimals"))
        ],
        lambda d: answers(("unempf_coef", _scotland()[0], 3), ("adj_r2", _scotland()[1], 3)),
    ),
    Task(
        "cn_copper_spearman",
        "closed-form",
        _csv("copper"),
        [
            f"In {csv_path('copper')}, what is the Spearman rank correlation between "
            "COPPERPRICE and WORLDCONSUMPTION, and its p-value?"
            + _fmt(("rho", "rounded to 3 decimals"), ("p_value", "rounded to 4 decimals"))
        ],
        lambda d: answers(("rho", _copper()[0], 3), ("p_value", _copper()[1], 4)),
    ),
    Task(
        "cn_iris_wide_sepals",
        "closed-form",
        _csv("iris"),
        [
            f"{csv_path('iris')} holds iris flowers measured in cm, with their species. Which "
            "species has the largest mean sepal width, and what is the mean petal length of "
            "that species?"
            + _fmt(("species", "the species as written"), ("petal_length", "rounded to 2 decimals"))
        ],
        lambda d: answers(("species", _iris()[0], 0), ("petal_length", _iris()[1], 2)),
    ),
    Task(
        "cn_ccard_owners",
        "closed-form",
        _csv("ccard"),
        [
            f"{csv_path('ccard')} holds credit card holders' average monthly spending (AVGEXP) "
            "and whether they own their home (OWNRENT is 1) or rent (0). What is the mean "
            "AVGEXP of owners minus that of renters, and is the difference significant at the "
            "0.05 level by Welch's t-test?"
            + _fmt(("difference", "rounded to 2 decimals"), ("significant", "yes or no"))
        ],
        lambda d: answers(("difference", _ccard()[0], 2), ("significant", _ccard()[1], 0)),
    ),
    Task(
        "cn_elnino_warmest_year",
        "closed-form",
        _csv("elnino"),
        [
            f"{csv_path('elnino')} holds monthly sea surface temperatures, one row per YEAR and "
            "one column per month. Which year has the highest mean over its twelve months, and "
            "what is that mean?"
            + _fmt(("year", "an integer"), ("mean_temp", "rounded to 2 decimals"))
        ],
        lambda d: answers(("year", float(_elnino()[0]), 0), ("mean_temp", _elnino()[1], 2)),
    ),
    Task(
        "cn_smoking_chi2",
        "closed-form",
        _csv("china_smoking"),
        [
            f"{csv_path('china_smoking')} holds, for eight Chinese cities, counts of people by "
            "smoking and lung cancer. Add the counts over all cities into one 2x2 table "
            "(smoking yes/no by cancer yes/no) and run a chi-square test of independence with "
            "Yates' continuity correction. What is the chi-square statistic?"
            + _fmt(("chi2", "rounded to 2 decimals"))
        ],
        lambda d: answers(("chi2", _smoking_chi2(), 2)),
    ),
]


# Reference solutions (never shown to a model): tests/eval/test_public_tasks.py runs each.
_SOLUTIONS = {
    "cn_statecrime_top_murder": _read("statecrime") + "row = df.loc[df['murder'].idxmax()]\n"
    "final_answer(f\"@state[{row['state']}], @murder[{row['murder']:.1f}]\")",
    "cn_nile_low_years": _read("nile") + "v = df['volume']\n"
    "final_answer(f'@n_years[{int((v < v.mean() - v.std()).sum())}]')",
    "cn_heart_age_survival": _read("heart")
    + "a = df[df.censors == 1]['age'].mean()\ns = df[df.censors == 0]['survival'].median()\n"
    "final_answer(f'@mean_age[{a:.2f}], @median_survival[{s:.1f}]')",
    "cn_scotland_ols": _read("scotland") + "import statsmodels.formula.api as smf\n"
    "fit = smf.ols('YES ~ COUTAX + UNEMPF', data=df).fit()\n"
    "final_answer(f\"@unempf_coef[{fit.params['UNEMPF']:.3f}], @adj_r2[{fit.rsquared_adj:.3f}]\")",
    "cn_copper_spearman": _read("copper") + "from scipy.stats import spearmanr\n"
    "rho, p = spearmanr(df['COPPERPRICE'], df['WORLDCONSUMPTION'])\n"
    "final_answer(f'@rho[{rho:.3f}], @p_value[{p:.4f}]')",
    "cn_iris_wide_sepals": _read("iris") + "m = df.groupby('species').mean()\n"
    "top = m['sepal width (cm)'].idxmax()\n"
    "final_answer(f\"@species[{top}], @petal_length[{m.loc[top, 'petal length (cm)']:.2f}]\")",
    "cn_ccard_owners": _read("ccard") + "from scipy.stats import ttest_ind\n"
    "own, rent = df[df.OWNRENT == 1].AVGEXP, df[df.OWNRENT == 0].AVGEXP\n"
    "p = ttest_ind(own, rent, equal_var=False).pvalue\n"
    'final_answer(f"@difference[{own.mean() - rent.mean():.2f}], '
    "@significant[{'yes' if p < 0.05 else 'no'}]\")",
    "cn_elnino_warmest_year": _read("elnino") + "m = df.set_index('YEAR').mean(axis=1)\n"
    "final_answer(f'@year[{int(m.idxmax())}], @mean_temp[{m.max():.2f}]')",
    "cn_smoking_chi2": _read("china_smoking") + "from scipy.stats import chi2_contingency\n"
    "t = df.drop(columns='city').sum()\n"
    "table = [[t.smoking_yes_cancer_yes, t.smoking_yes_cancer_no], "
    "[t.smoking_no_cancer_yes, t.smoking_no_cancer_no]]\n"
    "final_answer(f'@chi2[{chi2_contingency(table)[0]:.2f}]')",
}
for _task in CLOSED_FORM_FRESH_TASKS:
    _task.solution = [_SOLUTIONS[_task.name]]
