"""A cell that replaces the user's injected objects is not run (agent/given.py)."""

import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.given import given_note, rebound_given
from cave_tui.models import ScriptedModel

GIVEN = ["flights", "delay_category", "airlines"]


def test_module_level_rebindings_of_given_names_are_found():
    code = (
        "import pandas as pd\n"
        "flights = flights.dropna(subset=['arr_delay'])\n"
        "def delay_category(minutes):\n"
        "    flights = 1  # a local: not the user's\n"
        "    return 'late'\n"
        "if True:\n"
        "    a, (airlines, b) = 1, (2, 3)\n"
    )
    ask = "Classify each delay with `delay_category`; skip missing ones."
    assert rebound_given(code, GIVEN, ask) == ["flights", "delay_category", "airlines"]
    for other in ("del flights", "import json as flights", "for flights in []: pass"):
        assert rebound_given(other, GIVEN, ask) == ["flights"], other


def test_changes_in_place_and_new_names_are_not_rebindings():
    code = "flights['late'] = flights['arr_delay'] > 15\nlate = flights[flights['late']]"
    assert rebound_given(code, GIVEN, "Mark the late flights.") == []
    assert rebound_given("x = (", GIVEN, "") == []  # does not parse: the runtime says so
    assert rebound_given("flights = 1", [], "") == []


def test_a_request_that_asks_to_change_the_object_lets_the_cell_run():
    code = "flights = flights.dropna(subset=['arr_delay'])"
    assert rebound_given(code, GIVEN, "Drop the rows of `flights` with no arr_delay.") == []
    assert rebound_given(code, GIVEN, "Replace flights with its 2013 rows.") == []
    # Named but not to be changed, or a change asked of another object: not run.
    assert rebound_given(code, GIVEN, "Count the rows of `flights`.") == ["flights"]
    assert rebound_given(code, GIVEN, "Drop the rows of `planes` with no year.") == ["flights"]


async def test_a_cell_replacing_the_users_frame_is_not_run_and_the_frame_survives(runtime):
    original = await runtime.retrieve("flights")
    replace = "```python\nflights = flights[flights['carrier'] == 'AA']\nn = len(flights)\n```"
    derive = "```python\naa = flights[flights['carrier'] == 'AA']\nn = len(aa)\n```"
    model = ScriptedModel([replace, derive, "2 flights."])
    events = [
        e async for e in CaveAgent(model, runtime).stream_events("Store AA's flights in `n`.")
    ]
    refused = [e for e in events if isinstance(e, ev.ExecutionErrorEvent)]
    assert [e.error_type for e in refused] == ["GivenReplaced"]
    assert given_note(["flights"]) in model.requests[1][-1]["content"]
    assert await runtime.retrieve("flights") is original  # the user's object, untouched
    assert await runtime.retrieve("n") == 2
    pd.testing.assert_frame_equal(await runtime.retrieve("flights"), original)


async def test_an_empty_injected_variable_is_a_slot_to_fill(runtime):
    from cave_tui.runtime import Variable

    runtime.inject(Variable("result", [], "Output: the AA rows"))
    fill = "```python\nresult = flights[flights['carrier'] == 'AA']\n```"
    model = ScriptedModel([fill, "Filled."])
    await CaveAgent(model, runtime).run("Put AA's flights there.")
    assert len(await runtime.retrieve("result")) == 2
    # Once filled, it holds something: the next turn's rebinding is not run.
    model = ScriptedModel(["```python\nresult = None\n```", "Done."])
    await CaveAgent(model, runtime).run("Look at it.")
    assert len(await runtime.retrieve("result")) == 2
