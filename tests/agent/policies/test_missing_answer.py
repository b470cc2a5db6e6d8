"""MissingAnswer: an answer giving a missing value (nan, None, inf) for what is asked is
questioned once; a real value, or prose that mentions NaN, costs nothing."""

from cave_tui.agent.events import FinalResponseEvent, InterventionKind
from cave_tui.agent.policies import PRESETS
from cave_tui.agent.policies.missing_answer import missing_values
from tests.agent.policies.helpers import fenced, interventions, run_turn

TASK = "What is the mean departure delay of carrier UA? Answer format: @mean_delay[value]"
NOTHING = (
    "m = flights[flights['carrier'] == 'United']['dep_delay'].mean()\n"
    "final_answer(f'@mean_delay[{m:.2f}]')"
)
FIXED = (
    "m = flights[flights['carrier'] == 'UA']['dep_delay'].mean()\n"
    "final_answer(f'@mean_delay[{m:.2f}]')"
)


def test_missing_values_are_read_from_the_fields_or_the_whole_answer():
    assert missing_values("@mean[nan]", ["mean"]) == ["@mean[nan]"]
    assert missing_values("@r[0.5], @p[ NaN ]", ["r", "p"]) == ["@p[NaN]"]
    for value in ("None", "-inf", "<NA>", "NaT"):
        assert missing_values(value, []) == [value], value
    assert missing_values(" `nan` ", []) == ["nan"]
    for answer in ("@mean[7.33]", "No NaN values are left.", "@mean[nanometre]", "0"):
        assert missing_values(answer, ["mean"]) == [], answer
    assert missing_values("@other[nan]", ["mean"]) == []  # not a field of the form


async def test_a_nan_answer_is_questioned_once_then_the_fix_is_taken(runtime):
    events, model, _ = await run_turn(
        runtime, [fenced(NOTHING), fenced(FIXED)], TASK, policies="small"
    )
    assert ("missing_answer", InterventionKind.DOUBT) in interventions(events)
    assert "The answer gives @mean_delay[nan]: a missing value" in model.requests[1][-1]["content"]
    final = [e.content for e in events if isinstance(e, FinalResponseEvent)]
    assert final == ["@mean_delay[10.00]"]


async def test_a_real_value_costs_nothing(runtime):
    events, model, _ = await run_turn(runtime, [fenced(FIXED)], TASK, policies="small")
    assert len(model.requests) == 1
    assert not [i for i in interventions(events) if i[0] == "missing_answer"]


def test_in_small_and_strict_only():
    assert all("missing_answer" in PRESETS[p] for p in ("small", "strict"))
    assert all("missing_answer" not in PRESETS[p] for p in ("guided", "lean", "minimal"))
