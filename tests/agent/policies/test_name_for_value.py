"""NameForValue: an answer that is only the name of the variable the turn computed is
questioned once; a string variable's value, or a name the turn did not bind, is taken."""

from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies import PRESETS
from cave_tui.agent.policies.name_for_value import name_note
from tests.agent.policies.helpers import fenced, interventions, run_turn

COMPUTE = "monthly = flights.groupby('carrier')['dep_delay'].mean().round(1)"


async def test_the_name_in_quotes_is_questioned_and_the_value_then_given(runtime):
    slip = fenced(f"{COMPUTE}\nfinal_answer('monthly')")
    fixed = fenced("final_answer(monthly)")
    task = "Mean departure delay per carrier?"
    events, model, _ = await run_turn(runtime, [slip, fixed], task, policies="name_for_value")
    assert interventions(events) == [("name_for_value", InterventionKind.DOUBT)]
    assert len(model.requests) == 2 and name_note("monthly") in model.requests[1][-1]["content"]
    assert events[-1].content != "monthly" and "UA" in events[-1].content


async def test_a_bare_name_as_the_reply_after_the_cell_is_questioned(runtime):
    compute = fenced(COMPUTE)
    events, model, _ = await run_turn(
        runtime, [compute, "monthly", fenced("final_answer(monthly)")], "Delay per carrier?",
        policies="name_for_value",
    )  # fmt: skip
    assert interventions(events) == [("name_for_value", InterventionKind.DOUBT)]
    assert len(model.requests) == 3 and events[-1].content != "monthly"


async def test_a_string_value_or_a_name_the_turn_did_not_bind_is_taken_at_once(runtime):
    word = fenced("UA = 'UA'\nfinal_answer(UA)")  # a string that is its own name
    events, model, _ = await run_turn(runtime, [word], "Which carrier?", policies="small")
    assert events[-1].content == "UA" and len(model.requests) == 1
    assert ("name_for_value", InterventionKind.DOUBT) not in interventions(events)
    given = fenced("final_answer('flights')")  # a given frame's name, not computed now
    events, model, _ = await run_turn(
        runtime, [given], "Which variable holds the flights?", policies="name_for_value"
    )
    assert events[-1].content == "flights" and interventions(events) == []


def test_the_small_and_strict_presets_have_it_and_guided_does_not():
    assert "name_for_value" in PRESETS["small"] and "name_for_value" in PRESETS["strict"]
    assert "name_for_value" not in PRESETS["guided"]
