"""A fifth closed-form part (`closed_form_mixed`, `cm_*`): ten held-out questions of mixed kinds
(summary statistics, a group-by then argmax, a filter on several conditions, a correlation with
its significance, a t-test, a chi-square test, a regression, a percentage, a date question and a
missing-value question), on bundled data no other task uses: the Vega `driving`,
`iowa_electricity`, `la_riots` and `wheat` sets, statsmodels' co2, modechoice and randhie, and
scikit-learn's linnerud. The CSVs of co2, la_riots and wheat have missing values; the
modechoice questions name its columns by everyday words (household income, party size) where
the file says `hinc` and `psize`.

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

VEGA = ("driving", "iowa_electricity", "la_riots", "wheat")


@functools.cache
def _frame(name: str) -> pd.DataFrame:
    if name in VEGA:
        from vega_datasets import local_data

        frame: pd.DataFrame = getattr(local_data, name)()
        return frame
    if name == "linnerud":
        from sklearn.datasets import load_linnerud

        frame = load_linnerud(as_frame=True).frame  # the exercises, then the measurements
        return frame
    import statsmodels.datasets as datasets

    frame = getattr(datasets, name).load_pandas().data
    if name == "co2":  # weekly, indexed by the date of each week
        frame = frame.rename_axis("date").reset_index()
    return frame


def table(name: str) -> pd.DataFrame:
    """A fresh copy of the dataset *name* as its CSV holds it."""
    return _frame(name).copy()


def _csv(name: str) -> Callable[[Data], list[Any]]:
    return _write_csv(name, table)


def _gas_summary() -> tuple[float, float]:
    d = table("driving")
    gas = d.loc[d["year"].between(1970, 1990), "gas"]
    return float(gas.mean()), float(gas.std(ddof=1))


def _iowa_peak() -> tuple[int, float]:
    d = table("iowa_electricity")
    totals = d.groupby(d["year"].dt.year)["net_generation"].sum()
    return int(totals.idxmax()), float(totals.max())


def _riots_count() -> int:
    d = table("la_riots")
    return int(((d["gender"] == "Male") & (d["type"] == "Homicide") & (d["age"] < 30)).sum())


def _wheat_corr() -> tuple[float, str]:
    from scipy import stats

    d = table("wheat").dropna(subset=["wheat", "wages"])
    result = stats.pearsonr(d["wheat"], d["wages"])
    return float(result.statistic), "yes" if result.pvalue < 0.05 else "no"


def _randhie_chi2() -> float:
    from scipy import stats

    d = table("randhie")
    observed = pd.crosstab(d["idp"], d["mdvis"] >= 1)
    return float(stats.chi2_contingency(observed, correction=True).statistic)


def _chosen() -> pd.DataFrame:
    d = table("modechoice")
    return d[d["choice"] == 1]


def _income_welch() -> tuple[float, str]:
    from scipy import stats

    d = _chosen()
    air, car = d.loc[d["mode"] == 1, "hinc"], d.loc[d["mode"] == 4, "hinc"]
    result = stats.ttest_ind(air, car, equal_var=False)
    return float(result.statistic), "yes" if result.pvalue < 0.05 else "no"


def _alone_car() -> float:
    d = _chosen()
    return float((d.loc[d["psize"] == 1, "mode"] == 4).mean() * 100)


def _situps_ols() -> tuple[float, float]:
    import statsmodels.api as sm

    d = table("linnerud")
    fit = sm.OLS(d["Situps"], sm.add_constant(d[["Waist", "Weight"]])).fit()
    return float(fit.params["Waist"]), float(fit.rsquared)


def _co2_month() -> tuple[int, float]:
    d = table("co2")
    means = d.groupby(d["date"].dt.month)["co2"].mean()  # weeks without a value left out
    return int(means.idxmax()), float(means.max())


def _co2_gaps() -> tuple[int, float]:
    d = table("co2")
    filled = d["co2"].interpolate(method="linear")
    return int(d["co2"].isna().sum()), float(filled[d["date"].dt.year == 1964].mean())


_DRIVING = (
    f"{csv_path('driving')} holds, for each year from 1956 to 2010, the miles driven per person "
    "in the United States (miles) and the inflation-adjusted price of a gallon of gasoline "
    "(gas); side only places a chart label."
)
_IOWA = (
    f"{csv_path('iowa_electricity')} holds the net electricity generation of Iowa, one row per "
    "year (written as YYYY-01-01) and energy source."
)
_RIOTS = (
    f"{csv_path('la_riots')} lists the people who died in the 1992 Los Angeles riots, with "
    "their age, gender, race, date and place of death and the type of death."
)
_WHEAT = (
    f"{csv_path('wheat')} holds William Playfair's data on the price of a quarter of wheat "
    "(wheat) and the weekly wages of a good mechanic (wages), every five years from 1565 to "
    "1820; some values are missing."
)
_RANDHIE = (
    f"{csv_path('randhie')} holds data of the RAND Health Insurance Experiment, one row per "
    "person and year: mdvis is the number of outpatient visits to a medical doctor and idp "
    "is 1 if the person's plan has an individual deductible, else 0."
)
_MODES = (
    f"{csv_path('modechoice')} holds the travel mode choices of 210 travellers between Sydney "
    "and Melbourne, one row per traveller (individual) and mode (mode: 1 air, 2 train, 3 bus, "
    "4 car), choice being 1 on the row of the mode the traveller took and 0 on the others; "
    "the other columns hold times and costs of the mode and the traveller's household income "
    "and party size."
)
_LINNERUD = (
    f"{csv_path('linnerud')} holds the Linnerud data: three exercise results (Chins, Situps, "
    "Jumps) and three body measurements (Weight, Waist, Pulse) of 20 middle-aged men."
)
_CO2 = (
    f"{csv_path('co2')} holds weekly atmospheric CO2 concentrations (ppm) measured at Mauna "
    "Loa from March 1958 to December 2001, one row per week (date, as YYYY-MM-DD); some weeks "
    "have no value."
)

CLOSED_FORM_MIXED_TASKS: list[Task] = [
    Task(
        "cm_driving_gas_summary",
        "closed-form",
        _csv("driving"),
        [
            _DRIVING + " Over the years 1970 to 1990, both included, what are the mean and the "
            "sample standard deviation (ddof=1) of the gasoline price?"
            + _fmt(("mean_gas", "rounded to 3 decimals"), ("std_gas", "rounded to 3 decimals"))
        ],
        lambda d: answers(("mean_gas", _gas_summary()[0], 3), ("std_gas", _gas_summary()[1], 3)),
    ),
    Task(
        "cm_iowa_peak_year",
        "closed-form",
        _csv("iowa_electricity"),
        [
            _IOWA + " In which year was the total net generation over all sources the "
            "highest, and what was that total?"
            + _fmt(("year", "an integer"), ("total", "an integer"))
        ],
        lambda d: answers(("year", float(_iowa_peak()[0]), 0), ("total", _iowa_peak()[1], 0)),
    ),
    Task(
        "cm_riots_young_male_homicides",
        "closed-form",
        _csv("la_riots"),
        [
            _RIOTS + " How many of them were male, younger than 30 (age strictly below 30) "
            "and have the type 'Homicide'?" + _fmt(("count", "an integer"))
        ],
        lambda d: answers(("count", float(_riots_count()), 0)),
    ),
    Task(
        "cm_wheat_wages_corr",
        "closed-form",
        _csv("wheat"),
        [
            _WHEAT + " Over the years with both a wheat and a wages value, what is the Pearson "
            "correlation between the two, and is it significant at the 0.05 level?"
            + _fmt(("r", "rounded to 3 decimals"), ("significant", "yes or no"))
        ],
        lambda d: answers(("r", _wheat_corr()[0], 3), ("significant", _wheat_corr()[1], 0)),
    ),
    Task(
        "cm_randhie_deductible_chi2",
        "closed-form",
        _csv("randhie"),
        [
            _RANDHIE + " Cross-tabulate idp against whether the row has at least one visit "
            "(mdvis of 1 or more) and run a chi-square test of independence on that 2x2 "
            "table with Yates' continuity correction. What is the chi-square statistic?"
            + _fmt(("chi2", "rounded to 2 decimals"))
        ],
        lambda d: answers(("chi2", _randhie_chi2(), 2)),
    ),
    Task(
        "cm_modechoice_income_ttest",
        "closed-form",
        _csv("modechoice"),
        [
            _MODES + " Compare the household income of the travellers who chose air with that "
            "of the travellers who chose car using Welch's t-test (unequal variances), air as "
            "the first group. What is the t statistic, and is the difference significant at "
            "the 0.05 level?" + _fmt(("t", "rounded to 3 decimals"), ("significant", "yes or no"))
        ],
        lambda d: answers(("t", _income_welch()[0], 3), ("significant", _income_welch()[1], 0)),
    ),
    Task(
        "cm_modechoice_alone_car",
        "closed-form",
        _csv("modechoice"),
        [
            _MODES + " Of the travellers who travelled alone (a party size of 1), what "
            "percentage chose car?" + _fmt(("percent", "a percentage rounded to 2 decimals"))
        ],
        lambda d: answers(("percent", _alone_car(), 2)),
    ),
    Task(
        "cm_linnerud_situps_ols",
        "closed-form",
        _csv("linnerud"),
        [
            _LINNERUD + " Fit an ordinary least squares regression of Situps on Waist and "
            "Weight, with an intercept. Report the coefficient of Waist and the R-squared."
            + _fmt(("waist_coef", "rounded to 2 decimals"), ("r_squared", "rounded to 3 decimals"))
        ],
        lambda d: answers(("waist_coef", _situps_ols()[0], 2), ("r_squared", _situps_ols()[1], 3)),
    ),
    Task(
        "cm_co2_peak_month",
        "closed-form",
        _csv("co2"),
        [
            _CO2 + " Group the weeks by the calendar month of their date over all years: which "
            "month has the highest mean CO2 (weeks without a value left out), and what is "
            "that mean?"
            + _fmt(("month", "the month's number, 1 to 12"), ("mean_co2", "rounded to 2 decimals"))
        ],
        lambda d: answers(("month", float(_co2_month()[0]), 0), ("mean_co2", _co2_month()[1], 2)),
    ),
    Task(
        "cm_co2_gaps",
        "closed-form",
        _csv("co2"),
        [
            _CO2 + " How many weeks have no CO2 value? Then fill each missing value by linear "
            "interpolation between the nearest weeks before and after it that have a value, "
            "and give the mean CO2 of the weeks of 1964."
            + _fmt(("n_missing", "an integer"), ("mean_1964", "rounded to 2 decimals"))
        ],
        lambda d: answers(
            ("n_missing", float(_co2_gaps()[0]), 0), ("mean_1964", _co2_gaps()[1], 2)
        ),
    ),
]

# What the suite checks of the data: the CSVs with missing values in a column a question
# needs, and the columns that the questions name only by everyday words.
MISSING_VALUES: dict[str, str] = {"co2": "co2", "la_riots": "age", "wheat": "wages"}
UNNAMED_COLUMNS: dict[str, tuple[str, list[str]]] = {
    "cm_modechoice_income_ttest": ("modechoice", ["hinc"]),
    "cm_modechoice_alone_car": ("modechoice", ["psize"]),
}


# Reference solutions (never shown to a model): tests/eval/test_public_tasks.py runs each.
_SOLUTIONS = {
    "cm_driving_gas_summary": _read("driving")
    + "g = df[(df['year'] >= 1970) & (df['year'] <= 1990)]['gas']\n"
    "final_answer(f'@mean_gas[{g.mean():.3f}], @std_gas[{g.std():.3f}]')",
    "cm_iowa_peak_year": _read("iowa_electricity")
    + "t = df.groupby(pd.to_datetime(df['year']).dt.year)['net_generation'].sum()\n"
    "final_answer(f'@year[{int(t.idxmax())}], @total[{int(t.max())}]')",
    "cm_riots_young_male_homicides": _read("la_riots")
    + "n = int(((df['gender'] == 'Male') & (df['age'] < 30) & (df['type'] == 'Homicide')).sum())\n"
    "final_answer(f'@count[{n}]')",
    "cm_wheat_wages_corr": _read("wheat") + "from scipy.stats import pearsonr\n"
    "both = df[['wheat', 'wages']].dropna()\n"
    "r, p = pearsonr(both['wheat'], both['wages'])\n"
    "final_answer(f\"@r[{r:.3f}], @significant[{'yes' if p < 0.05 else 'no'}]\")",
    "cm_randhie_deductible_chi2": _read("randhie") + "from scipy.stats import chi2_contingency\n"
    "t = pd.crosstab(df['idp'], df['mdvis'] > 0)\n"
    "final_answer(f'@chi2[{chi2_contingency(t)[0]:.2f}]')",
    "cm_modechoice_income_ttest": _read("modechoice") + "from scipy.stats import ttest_ind\n"
    "c = df[df['choice'] == 1]\n"
    "t, p = ttest_ind(c[c['mode'] == 1]['hinc'], c[c['mode'] == 4]['hinc'], equal_var=False)\n"
    "final_answer(f\"@t[{t:.3f}], @significant[{'yes' if p < 0.05 else 'no'}]\")",
    "cm_modechoice_alone_car": _read("modechoice")
    + "alone = df[(df['choice'] == 1) & (df['psize'] == 1)]\n"
    "final_answer(f\"@percent[{(alone['mode'] == 4).mean() * 100:.2f}]\")",
    "cm_linnerud_situps_ols": _read("linnerud") + "import statsmodels.formula.api as smf\n"
    "fit = smf.ols('Situps ~ Waist + Weight', data=df).fit()\n"
    "final_answer(f\"@waist_coef[{fit.params['Waist']:.2f}], @r_squared[{fit.rsquared:.3f}]\")",
    "cm_co2_peak_month": _read("co2")
    + "m = df.groupby(pd.to_datetime(df['date']).dt.month)['co2'].mean()\n"
    "final_answer(f'@month[{int(m.idxmax())}], @mean_co2[{m.max():.2f}]')",
    "cm_co2_gaps": _read("co2") + "n = int(df['co2'].isna().sum())\n"
    "df['co2'] = df['co2'].interpolate()\n"
    "y = df[df['date'].str.startswith('1964')]['co2'].mean()\n"
    "final_answer(f'@n_missing[{n}], @mean_1964[{y:.2f}]')",
}
for _task in CLOSED_FORM_MIXED_TASKS:
    _task.solution = [_SOLUTIONS[_task.name]]
