"""AllMissing: a result whose every value is NaN is questioned once; partial NaN never."""

import numpy as np
import pandas as pd

from cave_tui.agent.policies.all_missing import missing_note
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.runtime.shipped.summary import summarize

from .helpers import fenced, interventions, run_turn


def test_only_data_with_no_value_at_all_counts_as_all_missing():
    assert summarize("s", pd.Series([np.nan] * 12, index=list("abcdefghijkl"))).all_missing
    assert summarize("a", np.array([np.nan, np.nan])).all_missing
    assert summarize("o", pd.Series([None, None], dtype=object)).all_missing
    # A rolling mean: its head is NaN, not all of it (the preview shows only NaN).
    rolled = pd.Series(range(30), dtype=float).rolling(10).mean()
    assert not summarize("r", rolled).all_missing
    assert not summarize("i", pd.Series([0, 0, 0])).all_missing
    assert not summarize("e", pd.Series([], dtype=float)).all_missing
    assert not summarize("f", pd.DataFrame({"a": [np.nan]})).all_missing


def test_the_note_names_what_the_call_in_the_cell_does_with_labels_it_lacks():
    code = "by_name = counts.reindex(lookup.set_index('code')['name'])"
    note = missing_note("by_name", 16, code)
    assert "all 16 of its values are NaN" in note
    assert "by_name = counts.rename(index=lookup.set_index('code')['name'])" in note
    assert "map by the column" in missing_note("x", 3, "x = df['c'].map(m)")
    plain = missing_note("x", None, "x = f()")
    assert "matched nothing. Store the fixed result in `x`" in plain


async def test_an_all_missing_result_is_questioned_once_then_the_fix_is_taken():
    counts = pd.Series([3, 5], index=["UA", "DL"])
    names = pd.Series(["United", "Delta"], index=["UA", "DL"])
    runtime = IPythonRuntime(variables=[Variable("counts", counts), Variable("names", names)])
    wrong = "by_name = counts.reindex(names)\nfinal_answer('done')"
    right = "by_name = counts.rename(index=names)\nfinal_answer('done')"
    events, model, _ = await run_turn(
        runtime,
        [fenced(wrong), fenced(right)],
        "Store the counts indexed by name in `by_name`.",
        policies="all_missing",
    )
    assert interventions(events) == [("all_missing", "doubt")]
    assert len(model.requests) == 2
    assert (await runtime.retrieve("by_name")).to_dict() == {"United": 3, "Delta": 5}
    await runtime.stop()


async def test_a_result_with_some_values_is_never_questioned():
    runtime = IPythonRuntime(variables=[Variable("t", pd.Series([1.0, 2.0, np.nan, 4.0, 5.0]))])
    code = "smooth = t.rolling(2).mean()\nfinal_answer('done')"
    events, model, _ = await run_turn(
        runtime, [fenced(code)], "Store the 2-row rolling mean of t in `smooth`."
    )
    assert interventions(events) == [] and len(model.requests) == 1
    await runtime.stop()
