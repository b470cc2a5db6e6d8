"""Tasks on public data the suite does not use: the Vega datasets that ship in `vega_datasets`.

Written for issue 35, to measure the aids on data and wordings nobody tuned on. Nothing is
downloaded: `vega_datasets.local_data` reads the CSV and JSON files inside the package
(`pip install -e .[bench]`). Two kinds of task:

- frame tasks: the table is given as a variable, the result is stored under a name;
- closed-form questions over a CSV file (written to a temporary folder), answered in a
  fixed format (`@name[value]`), checked on the turn's final answer.

Two parts: `public` (`pb_*`, may be looked at while building the aids) and
`public_holdout` (`ph_*`, run and read only at the end). Select them with
`--tasks public` / `--tasks public_holdout` or by name.
"""

from __future__ import annotations

import functools
import os
import re
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pandas as pd
from eval_tasks import Rows, Task, Verdict

from cave_tui.runtime import Function, Variable

ANSWER = "@answer"  # the truth key checked on the final answer's text, not on a variable
CSV_DIR = Path(tempfile.gettempdir()) / "cave-bench-public"

Data = dict[str, pd.DataFrame]


@functools.cache
def _vega(name: str) -> pd.DataFrame:
    from vega_datasets import local_data

    frame: pd.DataFrame = getattr(local_data, name)()
    return frame


def table(name: str) -> pd.DataFrame:
    """A fresh copy of the Vega dataset *name* (`cars`, `seattle_weather`, ...)."""
    return _vega(name).copy()


def csv_path(name: str) -> Path:
    """Where the CSV of *name* is written for the closed-form questions."""
    return CSV_DIR / f"{name.replace('_', '-')}.csv"


def write_csv(frame: pd.DataFrame, target: Path) -> None:
    """*frame* as CSV at *target*, written aside, then renamed into place: runs of tasks on
    the same dataset at once (the suite's workers) never read a file another is writing."""
    target.parent.mkdir(parents=True, exist_ok=True)
    fd, aside = tempfile.mkstemp(dir=target.parent, prefix=f".{target.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", newline="") as handle:
            frame.to_csv(handle, index=False)
        os.replace(aside, target)
    except BaseException:
        Path(aside).unlink(missing_ok=True)
        raise


def _csv(name: str) -> Callable[[Data], list[Any]]:
    """Writes the dataset as CSV (the model reads it itself) and injects nothing."""

    def inject(d: Data) -> list[Any]:
        write_csv(table(name), csv_path(name))
        return []

    return inject


def _given(*names: str, extra: Callable[[], list[Any]] | None = None) -> Any:
    descriptions = {
        "cars": "Cars of 1970-1982: name, mpg, cylinders, horsepower, weight, year, origin",
        "seattle_weather": "Daily weather in Seattle 2012-2015: precipitation, temperatures, "
        "wind, weather type",
        "stocks": "Monthly closing prices of five tech stocks, 2000-2010",
        "barley": "Barley yields by variety, year (1931, 1932) and site",
        "iris": "Fisher's iris flowers: four measurements and the species",
        "us_employment": "US employment by sector, in thousands, one row per month",
        "airports": "US airports: IATA code, name, city, state, location",
    }

    def inject(d: Data) -> list[Any]:
        items: list[Any] = [Variable(n, table(n), descriptions[n]) for n in names]
        return [*items, *(extra() if extra else [])]

    return inject


@dataclass
class AnswerFormat:
    """A closed-form answer: `@name[value]` in the final answer, equal to *expected*
    (numbers within half a unit of the last asked decimal; text case-folded)."""

    name: str
    expected: float | str
    decimals: int = 2

    def check(self, actual: Any) -> Verdict:
        found = re.findall(rf"@{re.escape(self.name)}\[([^\]]*)\]", str(actual))
        if not found:
            return Verdict(False, f"no @{self.name}[...] in the answer: {str(actual)[:80]!r}")
        got = found[-1].strip()
        if isinstance(self.expected, str):
            ok = got.casefold() == self.expected.casefold()
            return Verdict(ok, "" if ok else f"expected {self.expected!r}, got {got!r}")
        try:
            value = float(got.replace(",", ""))
        except ValueError:
            return Verdict(False, f"expected a number, got {got!r}")
        ok = abs(value - self.expected) <= 0.5 * 10**-self.decimals + 1e-9
        return Verdict(ok, "" if ok else f"expected {self.expected:.{self.decimals}f}, got {got}")


def answers(*parts: tuple[str, float | str, int]) -> dict[str, Any]:
    """The truth of a closed-form question, one `(name, value, decimals)` per answer:
    `@answer`, `@answer:2`, ... (numbers rounded as asked)."""
    out: dict[str, Any] = {}
    for i, (name, value, decimals) in enumerate(parts):
        key = ANSWER if i == 0 else f"{ANSWER}:{i + 1}"
        expected = round(value, decimals) if isinstance(value, float) else value
        out[key] = AnswerFormat(name, expected, decimals)
    return out


def _answer(name: str, expected: float | str, decimals: int = 2) -> dict[str, Any]:
    return answers((name, expected, decimals))


def _fmt(name: str, what: str) -> str:
    return f" Answer format: @{name}[value], where value is {what}."


def fahrenheit(celsius: float) -> float:
    """Convert a temperature in degrees Celsius to degrees Fahrenheit."""
    return celsius * 9 / 5 + 32


def _weather() -> pd.DataFrame:
    return table("seattle_weather")


def _cars() -> pd.DataFrame:
    return table("cars")


# -- the part that may be looked at -------------------------------------------------------------

PUBLIC_TASKS: list[Task] = [
    Task(
        "pb_mpg_by_origin",
        "frame",
        _given("cars"),
        [
            "What is the mean Miles_per_Gallon of the cars of each Origin? Store a Series "
            "indexed by Origin in `mpg_by_origin`."
        ],
        lambda d: {"mpg_by_origin": _cars().groupby("Origin")["Miles_per_Gallon"].mean()},
        ["mpg_by_origin = cars.groupby('Origin')['Miles_per_Gallon'].mean()"],
    ),
    Task(
        "pb_warm_rain",
        "frame",
        _given("seattle_weather"),
        [
            "How many days of 2014 had weather 'rain' and a temp_max above 15? Store the int "
            "in `n_warm_rain`."
        ],
        lambda d: {
            "n_warm_rain": int(
                (
                    (_weather()["date"].dt.year == 2014)
                    & (_weather()["weather"] == "rain")
                    & (_weather()["temp_max"] > 15)
                ).sum()
            )
        },
        [
            "w = seattle_weather\nn_warm_rain = int(((w['date'].dt.year == 2014) & "
            "(w['weather'] == 'rain') & (w['temp_max'] > 15)).sum())"
        ],
    ),
    Task(
        "pb_csv_virginica",
        "closed-form",
        _csv("iris"),
        [
            f"The file {csv_path('iris')} holds Fisher's iris data. What is the mean "
            "petalLength of the species virginica?" + _fmt("mean_petal", "rounded to 2 decimals")
        ],
        lambda d: _answer(
            "mean_petal",
            float(table("iris").query("species == 'virginica'")["petalLength"].mean()),
        ),
        [
            "import pandas as pd\n"
            f"df = pd.read_csv({str(csv_path('iris'))!r})\n"
            "m = df[df['species'] == 'virginica']['petalLength'].mean()\n"
            "final_answer(f'@mean_petal[{m:.2f}]')"
        ],
    ),
    Task(
        "pb_csv_big_engines",
        "closed-form",
        _csv("cars"),
        [
            f"Read {csv_path('cars')}. How many cars have 8 cylinders and a Horsepower above "
            "150?" + _fmt("count", "an integer")
        ],
        lambda d: _answer(
            "count",
            float(((_cars()["Cylinders"] == 8) & (_cars()["Horsepower"] > 150)).sum()),
            0,
        ),
        [
            "import pandas as pd\n"
            f"df = pd.read_csv({str(csv_path('cars'))!r})\n"
            "n = int(((df['Cylinders'] == 8) & (df['Horsepower'] > 150)).sum())\n"
            "final_answer(f'@count[{n}]')"
        ],
    ),
    Task(
        "pb_stock_change",
        "frame",
        _given("stocks"),
        [
            "For each symbol, what is the percentage change from its first to its last price "
            "(by date)? Store a Series indexed by symbol in `change_pct`."
        ],
        lambda d: {
            "change_pct": table("stocks")
            .sort_values("date")
            .groupby("symbol")["price"]
            .agg(lambda p: (p.iloc[-1] / p.iloc[0] - 1) * 100)
        },
        [
            "s = stocks.sort_values('date').groupby('symbol')['price']\n"
            "change_pct = (s.last() / s.first() - 1) * 100"
        ],
    ),
    Task(
        "pb_barley_two_turns",
        "multi-turn",
        _given("barley"),
        [
            "Keep the barley rows of 1931 in a new frame `b31` (leave `barley` as it is).",
            "Now, from `b31`, store the total yield per site in `yield_31`, a Series indexed "
            "by site.",
        ],
        lambda d: {
            "b31": Rows(int((table("barley")["year"] == 1931).sum()), ["yield", "site"]),
            "yield_31": table("barley").query("year == 1931").groupby("site")["yield"].sum(),
        },
        [
            "b31 = barley[barley['year'] == 1931]",
            "yield_31 = b31.groupby('site')['yield'].sum()",
        ],
    ),
]


# -- the held-out part: run and read only at the end --------------------------------------------

_SECTORS = pd.DataFrame(
    {
        "code": ["CON", "MFG", "INF", "GOV"],
        "column": ["construction", "manufacturing", "information", "government"],
        "sector": ["Construction", "Manufacturing", "Information", "Government"],
    }
)


def _sector_means() -> pd.Series:
    e = table("us_employment")
    means = {
        row.sector: float(e.loc[e["month"].str.startswith("2009"), row.column].mean())
        for row in _SECTORS.itertuples()
    }
    return pd.Series(means)


PUBLIC_HOLDOUT_TASKS: list[Task] = [
    Task(
        "ph_heaviest_origin",
        "frame",
        _given("cars"),
        [
            "Which Origin has the highest mean Weight_in_lbs? Store the origin's name in "
            "`heaviest_origin`."
        ],
        lambda d: {"heaviest_origin": _cars().groupby("Origin")["Weight_in_lbs"].mean().idxmax()},
        ["heaviest_origin = cars.groupby('Origin')['Weight_in_lbs'].mean().idxmax()"],
    ),
    Task(
        "ph_wind_by_month",
        "frame",
        _given("seattle_weather"),
        [
            "What is the mean wind of each calendar month (1 to 12), over all the years? "
            "Store a Series indexed by month number in `wind_by_month`."
        ],
        lambda d: {"wind_by_month": _weather().groupby(_weather()["date"].dt.month)["wind"].mean()},
        ["w = seattle_weather\nwind_by_month = w.groupby(w['date'].dt.month)['wind'].mean()"],
    ),
    Task(
        "ph_fahrenheit_by_weather",
        "function",
        _given("seattle_weather", extra=lambda: [Function(fahrenheit)]),
        [
            "Using `fahrenheit`, store the mean temp_max in degrees Fahrenheit for each "
            "weather type in `f_by_weather` (a Series indexed by weather)."
        ],
        lambda d: {
            "f_by_weather": _weather()["temp_max"]
            .map(fahrenheit)
            .groupby(_weather()["weather"])
            .mean()
        },
        [
            "w = seattle_weather\n"
            "f_by_weather = w['temp_max'].map(fahrenheit).groupby(w['weather']).mean()"
        ],
    ),
    Task(
        "ph_sector_names",
        "join",
        _given(
            "us_employment",
            extra=lambda: [
                Variable("sectors", _SECTORS.copy(), "Sector codes, employment columns, names")
            ],
        ),
        [
            "For each sector listed in `sectors`, what was its mean employment over the "
            "months of 2009? Store a Series indexed by the sector's full name in "
            "`mean_2009`."
        ],
        lambda d: {"mean_2009": _sector_means()},
        [
            "import pandas as pd\n"
            "e = us_employment[us_employment['month'].str.startswith('2009')]\n"
            "mean_2009 = pd.Series({r.sector: e[r.column].mean() "
            "for r in sectors.itertuples()})"
        ],
    ),
    Task(
        "ph_csv_tx_airports",
        "closed-form",
        _csv("airports"),
        [
            f"{csv_path('airports')} lists US airports. How many of them are in the state "
            "TX?" + _fmt("n_tx", "an integer")
        ],
        lambda d: _answer("n_tx", float((table("airports")["state"] == "TX").sum()), 0),
        [
            "import pandas as pd\n"
            f"df = pd.read_csv({str(csv_path('airports'))!r})\n"
            "final_answer(f\"@n_tx[{int((df['state'] == 'TX').sum())}]\")"
        ],
    ),
    Task(
        "ph_csv_corr",
        "closed-form",
        _csv("cars"),
        [
            f"Using the data in {csv_path('cars')}, what is the Pearson correlation between "
            "Horsepower and Weight_in_lbs?" + _fmt("corr", "rounded to 3 decimals")
        ],
        lambda d: _answer("corr", float(_cars()["Horsepower"].corr(_cars()["Weight_in_lbs"])), 3),
        [
            "import pandas as pd\n"
            f"df = pd.read_csv({str(csv_path('cars'))!r})\n"
            "final_answer(f\"@corr[{df['Horsepower'].corr(df['Weight_in_lbs']):.3f}]\")"
        ],
    ),
    Task(
        "ph_csv_snow",
        "closed-form",
        _csv("seattle_weather"),
        [
            f"In {csv_path('seattle_weather')}, what is the mean precipitation of the days "
            "whose weather is 'snow'?" + _fmt("snow_precip", "rounded to 2 decimals")
        ],
        lambda d: _answer(
            "snow_precip",
            float(_weather().loc[_weather()["weather"] == "snow", "precipitation"].mean()),
        ),
        [
            "import pandas as pd\n"
            f"df = pd.read_csv({str(csv_path('seattle_weather'))!r})\n"
            "m = df.loc[df['weather'] == 'snow', 'precipitation'].mean()\n"
            "final_answer(f'@snow_precip[{m:.2f}]')"
        ],
    ),
    Task(
        "ph_iris_ratio",
        "frame",
        _given("iris"),
        [
            "Add a column `ratio` to `iris`, petalLength divided by petalWidth, then store "
            "the mean ratio of each species in `mean_ratio`."
        ],
        lambda d: {
            "mean_ratio": table("iris")
            .assign(ratio=lambda f: f["petalLength"] / f["petalWidth"])
            .groupby("species")["ratio"]
            .mean()
        },
        [
            "iris['ratio'] = iris['petalLength'] / iris['petalWidth']\n"
            "mean_ratio = iris.groupby('species')['ratio'].mean()"
        ],
    ),
]
