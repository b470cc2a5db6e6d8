"""Error hints over real pandas errors never steer wrong (issue 31, item 3).

Seen: "merge with flights first" made the model rebind the given `flights`; a `groupby` on
a missing column got a hint to filter rows by that value; `'Series' object has no
attribute 'join'` got "There is no column 'join'".
"""

from __future__ import annotations

import pandas as pd
import pytest
import pytest_asyncio

from cave_tui import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.observation import error_hints, frame_columns, frame_keys, frame_levels
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable

FLIGHTS = pd.DataFrame(
    {
        "carrier": ["AA", "UA", "AA", "DL"],
        "origin": ["JFK", "EWR", "LGA", "JFK"],
        "dep_delay": [5.0, 10.0, 7.0, 1.0],
        "arr_delay": [2.0, 12.0, 3.0, 0.0],
    }
)
AIRLINES = pd.DataFrame({"carrier": ["AA", "UA", "DL"], "name": ["American", "United", "Delta"]})


pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def given():
    """A real runtime holding the given `flights` and `airlines` (shared: tests only read)."""
    rt = IPythonRuntime(
        variables=[Variable("flights", FLIGHTS, "flights"), Variable("airlines", AIRLINES, "")]
    )
    yield rt
    await rt.stop()


async def _hints(rt: IPythonRuntime, code: str) -> list[str]:
    result = await rt.execute(code)
    assert not result.success
    rows = await rt.namespace_summary()
    return error_hints(code, result, frame_columns(rows), frame_levels(rows), frame_keys(rows))


async def test_a_missing_column_names_the_frames_real_columns_closest_first(given):
    (hint,) = await _hints(given, "flights['dep_dealy'].mean()")
    assert hint.startswith("There is no column 'dep_dealy' in flights; its columns: dep_delay,")
    for column in FLIGHTS.columns:
        assert column in hint


async def test_a_groupby_on_a_missing_column_names_columns_not_a_row_filter(given):
    (hint,) = await _hints(given, "flights.groupby('airline')['dep_delay'].mean()")
    assert "There is no column 'airline' in flights" in hint
    assert "(its columns: carrier, origin, dep_delay, arr_delay)" in hint
    assert "==" not in hint and "index label" not in hint and "set_index" not in hint
    # The merge it suggests binds a new name and brings the airline's name.
    assert "merged = flights.merge(airlines, on='carrier'), then use merged['name']" in hint
    (hint,) = await _hints(given, "flights.sort_values(by='delay')")
    assert hint.startswith("There is no column 'delay' in flights; its columns: dep_delay")


async def test_a_series_method_of_another_kind_is_named_not_a_column(given):
    (hint,) = await _hints(given, "flights['carrier'].join(', ')")
    assert "no column" not in hint
    assert "s.str.join(...)" in hint and "', '.join(s.astype(str))" in hint
    assert (await given.execute("', '.join(flights['carrier'].astype(str))")).success
    (hint,) = await _hints(given, "flights['carrier'].merge(airlines)")
    assert "`merge` is a DataFrame method" in hint and "no column" not in hint
    (hint,) = await _hints(given, "flights.unique()")
    assert "`unique` is a Series method" in hint and "no column" not in hint
    (hint,) = await _hints(given, "flights['origin'].year")
    assert "s.dt.year" in hint
    # A name that is no pandas attribute of any kind is still a missing column.
    (hint,) = await _hints(given, "flights.dep_delays")
    assert hint.startswith("There is no column 'dep_delays' in flights; its columns: dep_delay")


async def test_a_merge_needed_hint_never_rebinds_a_given_frame(given):
    (hint,) = await _hints(given, "airlines.groupby('name')['dep_delay'].mean()")
    assert "merge with" not in hint and "flights = " not in hint and "airlines = " not in hint
    merge = "merged = flights.merge(airlines, on='carrier')"
    assert merge in hint and "then use merged['dep_delay']" in hint
    # What it suggests runs, and the given frames are as they were.
    rt = IPythonRuntime(
        variables=[Variable("flights", FLIGHTS, "flights"), Variable("airlines", AIRLINES, "")]
    )
    try:
        assert (await rt.execute(merge)).success
        assert list(await rt.retrieve("flights")) == list(FLIGHTS.columns)
        assert "dep_delay" in (await rt.retrieve("merged")).columns
    finally:
        await rt.stop()


async def test_an_agent_turn_observes_the_hint_and_the_given_frame_stays():
    rt = IPythonRuntime(
        variables=[Variable("flights", FLIGHTS, "flights"), Variable("airlines", AIRLINES, "")]
    )
    replies = ["```python\nairlines.groupby('name')['dep_delay'].mean()\n```", "Cannot tell."]
    model = ScriptedModel(replies)
    try:
        events = [
            e async for e in CaveAgent(model, rt, display=False).stream_events("worst airline?")
        ]
    finally:
        await rt.stop()
    hints = [e for e in events if isinstance(e, ev.InterventionEvent)]
    assert hints and hints[0].policy == "error_hints"
    observation = model.requests[1][-2]["content"] + model.requests[1][-1]["content"]
    assert "merged = flights.merge(airlines, on='carrier')" in observation
    assert "merge with flights first" not in observation


async def test_a_derived_frame_used_for_the_given_ones_columns_is_pointed_back_not_merged():
    """Seen in the demo: `delays` (carrier, dep_delay), made from `flights`, grouped by
    'month' for 'arr_delay': both are columns of flights, so the hint names flights, and
    never a merge (which had the model join the two on carrier)."""
    flights = FLIGHTS.assign(month=[1, 1, 2, 2])
    delays = flights.groupby("carrier")["dep_delay"].mean().reset_index().assign(rank=[1, 2, 3])
    rt = IPythonRuntime(
        variables=[Variable("flights", flights, "flights"), Variable("delays", delays, "")]
    )
    try:
        (hint,) = await _hints(rt, "monthly = delays.groupby('month')['arr_delay'].mean()")
        assert "'month' is a column of flights, not of delays" in hint
        assert "use flights here instead of delays" in hint and "'arr_delay', 'month'" in hint
        assert "merge" not in hint.lower()
        # A line that also needs a column only the other frame has still gets the merge.
        (hint,) = await _hints(rt, "delays.groupby('month')['rank'].mean()")
        assert "merge" in hint.lower()
    finally:
        await rt.stop()
