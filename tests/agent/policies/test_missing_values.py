"""MissingValues (strict): missing values the request leaves out."""

import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent.policies.missing_values import MISSING_VALUES_NOTE, keeps_missing
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Variable


def test_missing_values_the_request_leaves_out_and_no_cell_dropped():
    ask = "What share of flights left late? Leave out the missing dep_delay values."
    compares = ["late = (flights['dep_delay'] > 15).mean()"]
    assert keeps_missing(compares, ask)
    assert not keeps_missing(["f = flights.dropna(subset=['dep_delay'])", *compares], ask)
    assert not keeps_missing(["m = flights['dep_delay'].mean()"], ask)  # mean skips NaN
    assert not keeps_missing(compares, "What share of flights left late?")
    assert not keeps_missing([], ask)
    assert keeps_missing(["n = len(flights)"], "Count them, skipping rows where sex is missing.")


async def test_a_comparison_over_missing_values_the_request_leaves_out_is_questioned(runtime):
    runtime.inject(Variable("d", pd.DataFrame({"x": [20.0, None, 1.0]})))
    keeps = "```python\nshare = (d['x'] > 15).mean()\nfinal_answer(f'{share:.2f}')\n```"
    drops = (
        "```python\nshare = (d.dropna(subset=['x'])['x'] > 15).mean()\n"
        "final_answer(f'{share:.2f}')\n```"
    )
    model = ScriptedModel([keeps, drops])
    response = await CaveAgent(model, runtime, policies="strict").run(
        "Store in `share` the share of rows with x over 15; leave out the missing x."
    )
    assert MISSING_VALUES_NOTE in model.requests[1][-1]["content"]
    assert response.content == "0.50"
