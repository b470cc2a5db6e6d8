"""TextForNumbers (strict): text stored where numbers were asked."""

import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent.policies.text_for_numbers import text_for_numbers, text_note
from cave_tui.models import ScriptedModel
from cave_tui.runtime.shipped.summary import summarize


def test_text_where_the_request_asks_for_numbers_is_named():
    rows = [
        summarize("by_airline", pd.Series(["UA", "AA"], index=["x", "y"], name="carrier")),
        summarize("counts", pd.Series([3, 4], index=["x", "y"])),
    ]
    ask = "How many flights did each airline fly? Store them in `by_airline` and `counts`."
    assert text_for_numbers(["by_airline", "counts"], rows, ask, {"by_airline", "counts"}) == [
        ("by_airline", "count")
    ]
    assert (
        text_for_numbers(["by_airline"], rows, "Store the top carrier per day.", {"by_airline"})
        == []
    )
    assert text_for_numbers(["by_airline"], rows, ask, stored=set()) == []
    note = text_note(("by_airline", "count"))
    assert note.startswith("`by_airline` holds text values, but the request asks for a count")


async def test_a_mode_stored_where_counts_were_asked_is_questioned(runtime):
    mode = (
        "```python\nn = flights.groupby('carrier')['carrier'].agg(lambda s: s.value_counts()"
        ".idxmax())\nfinal_answer(n.to_string())\n```"
    )
    size = "```python\nn = flights.groupby('carrier').size()\nfinal_answer(n.to_string())\n```"
    model = ScriptedModel([mode, size])
    await CaveAgent(model, runtime, policies="strict").run(
        "Count the flights of each carrier; store them in `n`."
    )
    assert "`n` holds text values" in model.requests[1][-1]["content"]
    assert (await runtime.retrieve("n")).to_dict() == {"AA": 2, "UA": 1}
