"""ShortPrompt (opt-in: `small,short_prompt`): the shorter system rules (every call carries
them); the presets and rules the user set are unchanged."""

import pytest

from cave_tui.agent.prompt import DEFAULT_SYSTEM_INSTRUCTIONS

from .helpers import fenced, run_turn

ANSWER = fenced("n = len(flights)\nfinal_answer(n)")
TASK = "Store the number of flights in `n`."


def _system(model) -> str:
    return str(model.requests[0][0]["content"])


async def test_short_prompt_sends_the_short_rules_with_numbers_computed_in_the_cell(runtime):
    _, model, agent = await run_turn(runtime, [ANSWER], TASK, policies="small,short_prompt")
    system = _system(model)
    assert "Compute every number with code from the data" in system
    assert "Answer: plain text without code" not in system  # no reply without a cell
    assert "final_answer(text)" in system
    assert len(system) < len(agent.system_prompt()) + 1  # what the builder says it sends
    _, guided, _ = await run_turn(runtime, [ANSWER], TASK, policies="guided")
    assert len(system) < len(_system(guided)) - 200


@pytest.mark.parametrize("preset", ["guided", "lean", "strict", "small"])
async def test_other_presets_keep_the_default_rules(runtime, preset):
    _, model, _ = await run_turn(runtime, [ANSWER], TASK, policies=preset)
    assert "Answer: plain text without code" in _system(model)
    assert "Compute every number with code" not in _system(model)


async def test_rules_the_user_set_win_over_the_short_ones(runtime):
    own = "Always answer in French."
    _, model, _ = await run_turn(
        runtime, [ANSWER], TASK, policies="small,short_prompt", system_instructions=own
    )
    assert own in _system(model) and "Compute every number" not in _system(model)
    assert DEFAULT_SYSTEM_INSTRUCTIONS.splitlines()[0][:20] not in _system(model)
