"""CountsOfOne: counts per group that are all 1."""

import pandas as pd

from cave_tui.agent.policies.counts_of_one import ones_for_counts, ones_note
from cave_tui.runtime.summary import summarize


def test_counts_that_are_all_one_are_found():
    ones = pd.Series([1] * 16, index=[f"airline {i}" for i in range(16)])
    rows = [summarize("n", ones), summarize("m", pd.Series([1, 2, 1]))]
    ask = "Count the flights of each airline; store them in `n` and `m`."
    assert ones_for_counts(["n", "m"], rows, ask, {"n", "m"}) == ["n"]
    assert ones_for_counts(["n"], rows, "Store the flags of each airline in `n`.", {"n"}) == []
    assert "df.groupby('a').size()" in ones_note("n")
