"""KeepGiven: a cell that rebinds what the user gave runs; the original stays restorable."""

import pandas as pd

from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies.keep_given import kept_note, module_bindings
from cave_tui.runtime import Variable
from tests.agent.policies.helpers import fenced, interventions, run_turn


def test_module_level_bindings_are_found_and_function_locals_are_not():
    code = (
        "import pandas as pd\n"
        "flights = flights.dropna(subset=['arr_delay'])\n"
        "def delay_category(minutes):\n"
        "    flights = 1  # a local: not the user's\n"
        "    return 'late'\n"
        "if True:\n"
        "    a, (airlines, b) = 1, (2, 3)\n"
    )
    assert module_bindings(code) == ["pd", "flights", "delay_category", "a", "airlines", "b"]
    for other in ("del flights", "import json as flights", "for flights in []: pass"):
        assert module_bindings(other) == ["flights"], other
    assert module_bindings("flights['late'] = 1") == []  # a change in place
    assert module_bindings("x = (") == []  # does not parse: the runtime says so


async def test_a_rebinding_runs_in_any_language_and_the_original_is_kept(runtime):
    original = await runtime.retrieve("flights")
    replace = fenced("flights = flights[flights['carrier'] == 'AA']\nfinal_answer(len(flights))")
    events, model, _ = await run_turn(runtime, [replace], "Garde seulement les vols AA.")
    assert len(model.requests) == 1  # no refusal, no extra call
    assert len(await runtime.retrieve("flights")) == 2  # the cell ran
    assert interventions(events) == [("keep_given", InterventionKind.KEEP)]
    # The user's object is still reachable, untouched, and a re-injection restores it.
    kept = runtime.injected["flights"].value
    assert kept is original and len(kept) == 3
    runtime.inject(runtime.injected["flights"])
    pd.testing.assert_frame_equal(await runtime.retrieve("flights"), original)


async def test_the_model_is_told_in_the_observation(runtime):
    replace = fenced("flights = flights.head(1)")
    _, model, _ = await run_turn(runtime, [replace, "Done."], "Keep the first flight.")
    assert kept_note(["flights"]) in model.requests[1][-1]["content"]


async def test_changes_in_place_and_new_names_are_not_reported(runtime):
    code = fenced("flights['late'] = flights['dep_delay'] > 6\naa = flights.head(1)")
    events, _, _ = await run_turn(runtime, [code, "Done."], "Mark the late flights.")
    assert interventions(events) == []


async def test_an_empty_injected_variable_is_a_slot_to_fill(runtime):
    runtime.inject(Variable("result", [], "Output: the AA rows"))
    fill = fenced("result = flights[flights['carrier'] == 'AA']")
    events, _, _ = await run_turn(runtime, [fill, "Filled."], "Put AA's flights there.")
    assert len(await runtime.retrieve("result")) == 2
    assert interventions(events) == []
