"""A fourth closed-form part (`closed_form_wide`, `cw_*`): nine questions over WIDE CSV files
(49 to 65 columns) whose needed columns are mostly past the 24th, to measure whether a model
finds and uses columns in a file it cannot see at a glance. Bundled data no other task uses:
scikit-learn's digits (64 pixel columns, then the label), statsmodels' fertility (one column
per year 1960-2013) and the Vega hourly temperatures of Seattle and San Francisco in 2010
(`seattle_temps`, `sf_temps`), put side by side with one row per day and one column per city
and hour (values unchanged).

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

CITIES = (("seattle_temps", "seattle"), ("sf_temps", "sf"))


def _city_temps() -> pd.DataFrame:
    """One row per day of 2010: `date`, then `seattle_h00` ... `seattle_h23`, then `sf_h00`
    ... `sf_h23` (degrees Fahrenheit at each hour; both sources lack 2010-03-14 03:00)."""
    from vega_datasets import local_data

    parts = []
    for source, city in CITIES:
        hourly: pd.DataFrame = getattr(local_data, source)()
        stamp = hourly["date"].dt
        wide = hourly.assign(day=stamp.strftime("%Y-%m-%d"), hour=stamp.hour).pivot(
            index="day", columns="hour", values="temp"
        )
        wide.columns = [f"{city}_h{hour:02d}" for hour in wide.columns]
        parts.append(wide)
    return pd.concat(parts, axis=1).rename_axis("date").reset_index()


@functools.cache
def _frame(name: str) -> pd.DataFrame:
    if name == "digits":
        from sklearn.datasets import load_digits

        frame: pd.DataFrame = load_digits(as_frame=True).frame
        return frame.astype(int).rename(columns={"target": "digit"})  # the label comes last
    if name == "city_temps":
        return _city_temps()
    import statsmodels.datasets as datasets

    frame = getattr(datasets, name).load_pandas().data
    return frame


def table(name: str) -> pd.DataFrame:
    """A fresh copy of the dataset *name* as its CSV holds it."""
    return _frame(name).copy()


def _csv(name: str) -> Callable[[Data], list[Any]]:
    return _write_csv(name, table)


def _digits_top() -> tuple[int, float]:
    means = table("digits").groupby("digit")["pixel_6_3"].mean()
    return int(means.idxmax()), float(means.max())


def _digits_count() -> int:
    d = table("digits")
    return int(((d["digit"] == 9) & (d["pixel_5_6"] >= 10)).sum())


def _digits_welch() -> tuple[float, str]:
    from scipy import stats

    d = table("digits")
    three, eight = d.loc[d.digit == 3, "pixel_3_5"], d.loc[d.digit == 8, "pixel_3_5"]
    p = stats.ttest_ind(three, eight, equal_var=False).pvalue
    return float(three.mean() - eight.mean()), "yes" if p < 0.01 else "no"


def _fertility_pearson() -> tuple[float, int]:
    from scipy import stats

    d = table("fertility")[["1985", "2011"]].dropna()
    return float(stats.pearsonr(d["1985"], d["2011"]).statistic), len(d)


def _fertility_below() -> float:
    rates = table("fertility")["2011"].dropna()
    return float((rates < 2.1).mean() * 100)


def _fertility_high_1990() -> tuple[float, int]:
    d = table("fertility")
    later = d.loc[d["1990"] > 5, "2010"]
    return float(later.mean()), int(later.count())


def _sf_ols() -> tuple[float, float]:
    import statsmodels.api as sm

    d = table("city_temps")
    fit = sm.OLS(d["sf_h15"], sm.add_constant(d[["sf_h06"]])).fit()
    return float(fit.params["sf_h06"]), float(fit.rsquared)


def _warm_chi2() -> tuple[float, str]:
    from scipy import stats

    d = table("city_temps")
    observed = pd.crosstab(d["seattle_h14"] > 65, d["sf_h14"] > 65)
    result = stats.chi2_contingency(observed)
    return float(result.statistic), "yes" if result.pvalue < 0.05 else "no"


def _sf_august() -> float:
    d = table("city_temps")
    return float(d.loc[d["date"].str.startswith("2010-08"), "sf_h13"].mean())


_DIGITS = (
    f"{csv_path('digits')} holds 8x8 images of handwritten digits, one row per image: "
    "pixel_R_C is the grey level (0-16) of the pixel in row R and column C, and the column "
    "digit is the digit the image shows."
)
_FERTILITY = (
    f"{csv_path('fertility')} holds the fertility rate (births per woman) of countries, one "
    "row per country and one column per year (1960 to 2013; some values are missing)."
)
_TEMPS = (
    f"{csv_path('city_temps')} holds hourly temperatures (degrees Fahrenheit) of Seattle and "
    "San Francisco in 2010, one row per day (column date, as YYYY-MM-DD): seattle_h00 to "
    "seattle_h23 are Seattle's at 00:00 to 23:00, sf_h00 to sf_h23 San Francisco's."
)

CLOSED_FORM_WIDE_TASKS: list[Task] = [
    Task(
        "cw_digits_top_pixel",
        "closed-form",
        _csv("digits"),
        [
            _DIGITS + " Which digit has the largest mean value of pixel_6_3, and what is "
            "that mean?" + _fmt(("digit", "an integer"), ("mean", "rounded to 2 decimals"))
        ],
        lambda d: answers(("digit", float(_digits_top()[0]), 0), ("mean", _digits_top()[1], 2)),
    ),
    Task(
        "cw_digits_count_nines",
        "closed-form",
        _csv("digits"),
        [
            _DIGITS
            + " How many images of the digit 9 have a pixel_5_6 value of at least 10?"
            + _fmt(("count", "an integer"))
        ],
        lambda d: answers(("count", float(_digits_count()), 0)),
    ),
    Task(
        "cw_digits_welch",
        "closed-form",
        _csv("digits"),
        [
            _DIGITS + " Compare pixel_3_5 between the images of the digit 3 and those of the "
            "digit 8: what is the mean for 3 minus the mean for 8, and is the difference "
            "significant at the 0.01 level by Welch's t-test?"
            + _fmt(("difference", "rounded to 2 decimals"), ("significant", "yes or no"))
        ],
        lambda d: answers(
            ("difference", _digits_welch()[0], 2), ("significant", _digits_welch()[1], 0)
        ),
    ),
    Task(
        "cw_fertility_pearson",
        "closed-form",
        _csv("fertility"),
        [
            _FERTILITY + " Over the countries with a value in both 1985 and 2011, what is the "
            "Pearson correlation between the 1985 and the 2011 rates, and how many countries "
            "is it computed on?"
            + _fmt(("r", "rounded to 3 decimals"), ("n_countries", "an integer"))
        ],
        lambda d: answers(
            ("r", _fertility_pearson()[0], 3), ("n_countries", float(_fertility_pearson()[1]), 0)
        ),
    ),
    Task(
        "cw_fertility_below_replacement",
        "closed-form",
        _csv("fertility"),
        [
            _FERTILITY + " Of the countries with a value for 2011, what percentage had a 2011 "
            "rate below 2.1?" + _fmt(("percent", "a percentage rounded to 2 decimals"))
        ],
        lambda d: answers(("percent", _fertility_below(), 2)),
    ),
    Task(
        "cw_fertility_high_1990",
        "closed-form",
        _csv("fertility"),
        [
            _FERTILITY + " Take the countries whose 1990 rate was above 5. What was their mean "
            "rate in 2010 (over those with a 2010 value), and how many of them have a 2010 "
            "value?" + _fmt(("mean_2010", "rounded to 2 decimals"), ("n_countries", "an integer"))
        ],
        lambda d: answers(
            ("mean_2010", _fertility_high_1990()[0], 2),
            ("n_countries", float(_fertility_high_1990()[1]), 0),
        ),
    ),
    Task(
        "cw_temps_sf_ols",
        "closed-form",
        _csv("city_temps"),
        [
            _TEMPS + " Fit an ordinary least squares regression of San Francisco's 15:00 "
            "temperature on its 06:00 temperature, with an intercept. Report the slope and "
            "the R-squared."
            + _fmt(("slope", "rounded to 3 decimals"), ("r_squared", "rounded to 3 decimals"))
        ],
        lambda d: answers(("slope", _sf_ols()[0], 3), ("r_squared", _sf_ols()[1], 3)),
    ),
    Task(
        "cw_temps_warm_chi2",
        "closed-form",
        _csv("city_temps"),
        [
            _TEMPS + " Classify each day by whether Seattle's 14:00 temperature was above 65 "
            "and whether San Francisco's 14:00 temperature was above 65, and run a chi-square "
            "test of independence on that 2x2 table with Yates' continuity correction. What "
            "is the chi-square statistic, and is it significant at the 0.05 level?"
            + _fmt(("chi2", "rounded to 2 decimals"), ("significant", "yes or no"))
        ],
        lambda d: answers(("chi2", _warm_chi2()[0], 2), ("significant", _warm_chi2()[1], 0)),
    ),
    Task(
        "cw_temps_sf_august",
        "closed-form",
        _csv("city_temps"),
        [
            _TEMPS + " What was San Francisco's mean temperature at 13:00 over the days of "
            "August 2010?" + _fmt(("mean_temp", "rounded to 2 decimals"))
        ],
        lambda d: answers(("mean_temp", _sf_august(), 2)),
    ),
]

# The dataset of each task and the columns its question needs (the point of this set: most
# lie past the 24th column of the CSV).
NEEDED_COLUMNS: dict[str, tuple[str, list[str]]] = {
    "cw_digits_top_pixel": ("digits", ["pixel_6_3", "digit"]),
    "cw_digits_count_nines": ("digits", ["pixel_5_6", "digit"]),
    "cw_digits_welch": ("digits", ["pixel_3_5", "digit"]),
    "cw_fertility_pearson": ("fertility", ["1985", "2011"]),
    "cw_fertility_below_replacement": ("fertility", ["2011"]),
    "cw_fertility_high_1990": ("fertility", ["1990", "2010"]),
    "cw_temps_sf_ols": ("city_temps", ["sf_h06", "sf_h15"]),
    "cw_temps_warm_chi2": ("city_temps", ["seattle_h14", "sf_h14"]),
    "cw_temps_sf_august": ("city_temps", ["date", "sf_h13"]),
}


# Reference solutions (never shown to a model): tests/eval/test_public_tasks.py runs each.
_SOLUTIONS = {
    "cw_digits_top_pixel": _read("digits") + "m = df.groupby('digit')['pixel_6_3'].mean()\n"
    "final_answer(f'@digit[{int(m.idxmax())}], @mean[{m.max():.2f}]')",
    "cw_digits_count_nines": _read("digits")
    + "n = int(((df['digit'] == 9) & (df['pixel_5_6'] >= 10)).sum())\n"
    "final_answer(f'@count[{n}]')",
    "cw_digits_welch": _read("digits") + "from scipy.stats import ttest_ind\n"
    "a, b = df[df.digit == 3].pixel_3_5, df[df.digit == 8].pixel_3_5\n"
    "p = ttest_ind(a, b, equal_var=False).pvalue\n"
    'final_answer(f"@difference[{a.mean() - b.mean():.2f}], '
    "@significant[{'yes' if p < 0.01 else 'no'}]\")",
    "cw_fertility_pearson": _read("fertility") + "from scipy.stats import pearsonr\n"
    "both = df[['1985', '2011']].dropna()\n"
    "r = pearsonr(both['1985'], both['2011'])[0]\n"
    "final_answer(f'@r[{r:.3f}], @n_countries[{len(both)}]')",
    "cw_fertility_below_replacement": _read("fertility") + "v = df['2011'].dropna()\n"
    "final_answer(f'@percent[{(v < 2.1).mean() * 100:.2f}]')",
    "cw_fertility_high_1990": _read("fertility") + "v = df[df['1990'] > 5]['2010'].dropna()\n"
    "final_answer(f'@mean_2010[{v.mean():.2f}], @n_countries[{len(v)}]')",
    "cw_temps_sf_ols": _read("city_temps") + "import statsmodels.formula.api as smf\n"
    "fit = smf.ols('sf_h15 ~ sf_h06', data=df).fit()\n"
    "final_answer(f\"@slope[{fit.params['sf_h06']:.3f}], @r_squared[{fit.rsquared:.3f}]\")",
    "cw_temps_warm_chi2": _read("city_temps") + "from scipy.stats import chi2_contingency\n"
    "t = pd.crosstab(df['seattle_h14'] > 65, df['sf_h14'] > 65)\n"
    "chi2, p = chi2_contingency(t)[:2]\n"
    "final_answer(f\"@chi2[{chi2:.2f}], @significant[{'yes' if p < 0.05 else 'no'}]\")",
    "cw_temps_sf_august": _read("city_temps")
    + "aug = df[pd.to_datetime(df['date']).dt.month == 8]\n"
    "final_answer(f\"@mean_temp[{aug['sf_h13'].mean():.2f}]\")",
}
for _task in CLOSED_FORM_WIDE_TASKS:
    _task.solution = [_SOLUTIONS[_task.name]]
