"""CountsOfOne: counts per group that are all 1, after a cell reduced rows to one per group."""

import pandas as pd

from cave_tui.agent.policies.counts_of_one import ones_for_counts, ones_note
from cave_tui.runtime.shipped.summary import summarize

REDUCED = ["firsts = flights.groupby('carrier').first()", "n = firsts['origin'].value_counts()"]


def test_counts_that_are_all_one_after_a_reduction_are_found():
    ones = pd.Series([1] * 16, index=[f"airline {i}" for i in range(16)])
    rows = [summarize("n", ones), summarize("m", pd.Series([1, 2, 1]))]
    ask = "Count the flights of each airline; store them in `n` and `m`."
    assert ones_for_counts(["n", "m"], rows, ask, {"n", "m"}, REDUCED) == ["n"]
    flags = "Store the flags of each airline in `n`."
    assert ones_for_counts(["n"], rows, flags, {"n"}, REDUCED) == []
    assert "df.groupby('a').size()" in ones_note("n")


def test_data_where_each_group_has_one_row_is_left_alone():
    """Counting per tail number where every plane flew once: ones are the truth."""
    ones = pd.Series([1] * 5, index=[f"N{i}" for i in range(5)])
    ask = "Count the flights per tail number; store them in `n`."
    direct = ["print(flights['tailnum'].unique()[:5])", "n = flights.groupby('tailnum').size()"]
    assert ones_for_counts(["n"], [summarize("n", ones)], ask, {"n"}, direct) == []
