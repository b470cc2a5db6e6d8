"""Fresh out-of-suite tasks: other wordings and other classes of request, never tuned on.

Written when the policy layer was built (docs/policies.md), to measure the aids on what the
suite does not hold: requests in French and Spanish, a request that asks to rebind a given
frame, a true zero answer, a request that names a data file that is already loaded, an
injected function that times out once, a count asked without the word "count", upstream's
Hello World, and a two-turn task. Select them with `--tasks fresh` (or by `fr_*` name).
"""

from typing import Any

import pandas as pd
from eval_tasks import Rows, Task, _frames, _plus

from cave_tui.runtime import Function, Variable

Data = dict[str, pd.DataFrame]


def reverse(s: str) -> str:
    """Reverse a string."""
    return s[::-1]


def _flaky_rates(d: Data) -> list[Any]:
    calls: list[str] = []

    def fetch_exchange_rate(currency: str) -> float:
        """Today's rate of one US dollar in *currency* ('EUR', 'GBP'), from a rate service."""
        calls.append(currency)
        if len(calls) == 1:
            raise TimeoutError("the rate service did not answer within 5 s")
        return {"EUR": 0.92, "GBP": 0.79}[currency]

    return [Function(fetch_exchange_rate)]


def _secret(d: Data) -> list[Any]:
    return [Variable("secret", "!dlrow ,olleH", "A secret message"), Function(reverse)]


def _ua_rows(d: Data) -> int:
    return int((d["flights"]["carrier"] == "UA").sum())


def _ewr_share(d: Data) -> float:
    late = d["flights"][d["flights"]["arr_delay"] > 120]
    return float((late["origin"] == "EWR").mean() * 100)


FRESH_TASKS: list[Task] = [
    Task(
        "fr_vols_lga_retard",
        "frame",
        _frames("flights"),
        [
            "Combien de vols sont partis de LGA avec plus de 60 minutes de retard "
            "(dep_delay > 60) ? Stocke ce nombre entier dans `n_lga_60`."
        ],
        lambda d: {
            "n_lga_60": int(
                ((d["flights"]["origin"] == "LGA") & (d["flights"]["dep_delay"] > 60)).sum()
            )
        },
        ["n_lga_60 = int(((flights['origin'] == 'LGA') & (flights['dep_delay'] > 60)).sum())"],
    ),
    Task(
        "fr_masa_pinguinos",
        "frame",
        _frames("penguins"),
        [
            "¿Cuál es la masa corporal media (body_mass_g) de cada especie de pingüino? "
            "Guarda una Series indexada por especie en `masa_media`."
        ],
        lambda d: {"masa_media": d["penguins"].groupby("species")["body_mass_g"].mean()},
        ["masa_media = penguins.groupby('species')['body_mass_g'].mean()"],
    ),
    Task(
        "fr_keep_united",
        "frame",
        _frames("flights"),
        [
            "Keep only United's flights (carrier 'UA') in `flights` itself, then store how "
            "many rows it has left in `n_ua`."
        ],
        lambda d: {"flights": Rows(_ua_rows(d), ["carrier"]), "n_ua": _ua_rows(d)},
        ["flights = flights[flights['carrier'] == 'UA']\nn_ua = len(flights)"],
    ),
    Task(
        "fr_true_zero",
        "frame",
        _frames("flights"),
        [
            "How many flights left more than 1500 minutes late (dep_delay > 1500)? Store the "
            "int in `n_extreme`."
        ],
        lambda d: {"n_extreme": int((d["flights"]["dep_delay"] > 1500).sum())},
        ["n_extreme = int((flights['dep_delay'] > 1500).sum())"],
    ),
    Task(
        "fr_named_csv",
        "frame",
        _frames("penguins"),
        [
            "I loaded penguins.csv for you as `penguins`. Which island has the heaviest "
            "penguins on average (mean body_mass_g)? Store the island's name in "
            "`heaviest_island`."
        ],
        lambda d: {
            "heaviest_island": d["penguins"].groupby("island")["body_mass_g"].mean().idxmax()
        },
        ["heaviest_island = penguins.groupby('island')['body_mass_g'].mean().idxmax()"],
    ),
    Task(
        "fr_flaky_rate",
        "function",
        _flaky_rates,
        [
            "Using `fetch_exchange_rate`, convert 1000 US dollars to euros. Store the amount "
            "in euros, a float, in `eur`."
        ],
        lambda d: {"eur": 920.0},
        ["eur = 1000 * fetch_exchange_rate('EUR')"],
    ),
    Task(
        "fr_fleet_size",
        "frame",
        _frames("planes"),
        [
            "How big is each manufacturer's fleet in `planes` (planes per manufacturer)? "
            "Store a Series indexed by manufacturer in `fleet_size`."
        ],
        lambda d: {"fleet_size": d["planes"].groupby("manufacturer").size()},
        ["fleet_size = planes.groupby('manufacturer').size()"],
    ),
    Task(
        "fr_reverse_secret",
        "function",
        _secret,
        ["Reverse the secret."],
        lambda d: {"secret": "Hello, world!"},
        ["secret = reverse(secret)"],
    ),
    Task(
        "fr_mt_late_share",
        "multi-turn",
        _plus(_frames("flights"), lambda d: []),
        [
            "Make `delays`, the flights that arrived more than 120 minutes late (arr_delay > 120).",
            "What share of `delays` left from EWR, in percent (0-100)? Store it in `ewr_share`.",
        ],
        lambda d: {
            "delays": Rows(int((d["flights"]["arr_delay"] > 120).sum())),
            "ewr_share": _ewr_share(d),
        },
        [
            "delays = flights[flights['arr_delay'] > 120]",
            "ewr_share = (delays['origin'] == 'EWR').mean() * 100",
        ],
    ),
    Task(
        "fr_old_plane_seats",
        "frame",
        _frames("planes"),
        [
            "What is the median number of seats of the planes built before 1990 (year < "
            "1990)? Store it in `median_old_seats`."
        ],
        lambda d: {
            "median_old_seats": float(d["planes"][d["planes"]["year"] < 1990]["seats"].median())
        },
        ["median_old_seats = planes[planes['year'] < 1990]['seats'].median()"],
    ),
]
