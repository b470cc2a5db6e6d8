"""Presets, specs, the pipeline, and policies users write themselves."""

import pytest

from cave_tui import CaveAgent
from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies import (
    POLICY_NAMES,
    PRESETS,
    BasePolicy,
    UnknownPolicyError,
    describe_policies,
    policy_names,
    resolve_policies,
)
from cave_tui.models import ScriptedModel
from tests.agent.policies.helpers import fenced, interventions, run_turn


def test_specs_choose_presets_and_names_in_the_canonical_order():
    assert policy_names("off") == []
    assert policy_names("minimal") == ["error_hints", "keep_given"]
    assert "tips" in policy_names("guided,tips") and "tips" not in policy_names("guided")
    assert policy_names("minimal,rewind") == ["error_hints", "keep_given", "rewind"]
    assert policy_names(["rewind", "error_hints"]) == ["error_hints", "rewind"]
    # strict looks at every answer (look_always), which covers look_first's look; it keeps
    # the default system rules and no code_first tip (both opt-in); replies are begun in
    # code for the small preset only
    assert set(policy_names("strict")) == set(POLICY_NAMES) - {
        "code_first",
        "look_first",
        "short_prompt",
        "reply_in_code",
    }
    assert PRESETS["guided"] == (
        "error_hints",
        "keep_given",
        "rewind",
        "already_ran",
        "missing_result",
        "empty_answer",
        "answer_format",
        "all_missing",
        "codes_for_names",
        "pair_modes",
    )


@pytest.mark.parametrize("spec", ["gided", "guided,-nope", "tips,,bogus"])
def test_an_unknown_name_is_a_clear_error_listing_the_valid_ones(spec):
    with pytest.raises(UnknownPolicyError) as caught:
        policy_names(spec)
    message = str(caught.value)
    assert all(name in message for name in PRESETS) and "repeat_guard" in message


def test_an_unknown_name_fails_when_the_agent_is_built_not_mid_turn():
    with pytest.raises(UnknownPolicyError):
        CaveAgent(ScriptedModel([]), policies="guided,-tipz")


def test_every_policy_has_a_name_and_a_one_line_description():
    described = dict(describe_policies())
    assert list(described) == list(POLICY_NAMES)
    assert all(line and "\n" not in line for line in described.values())


class CountCells(BasePolicy):
    """Adds the cell count to every observation."""

    name = "count_cells"

    async def after_cell(self, turn, cell):
        return self.act(InterventionKind.HINT, f"cells so far: {len(turn.cells)}")


class NoDeletes(BasePolicy):
    """Refuses `del`."""

    name = "no_deletes"

    async def before_cell(self, turn, code):
        if code.lstrip().startswith("del "):
            return self.act(InterventionKind.REFUSE, "Do not delete the user's data.")
        return None


async def test_a_users_policy_runs_beside_a_preset_and_its_acts_are_events(runtime):
    cells = [fenced("del flights"), fenced("n = len(flights)\nprint(n)"), "3 flights."]
    events, model, agent = await run_turn(
        runtime, cells, "Count.", policies=["minimal", NoDeletes(), CountCells]
    )
    assert [p.name for p in agent.policies] == [
        "error_hints",
        "keep_given",
        "no_deletes",
        "count_cells",
    ]
    assert len(await runtime.retrieve("flights")) == 3
    assert ("no_deletes", InterventionKind.REFUSE) in interventions(events)
    assert "Do not delete" in model.requests[1][-1]["content"]
    response_counts = {}
    for policy, _ in interventions(events):
        response_counts[policy] = response_counts.get(policy, 0) + 1
    assert response_counts == {"no_deletes": 1, "count_cells": 1}


async def test_the_response_counts_interventions_and_each_turn_starts_fresh(runtime):
    bad = fenced("flights['nope']")
    model = ScriptedModel([bad, bad, "Gave up.", bad, "Gave up again."])
    agent = CaveAgent(model, runtime, display=False, policies="repeat_guard")
    first = await agent.run("one")
    assert first.interventions == {"repeat_guard": 1}
    # The failure of the last turn does not make the same cell a resend in this one.
    second = await agent.run("two")
    assert second.interventions == {}
    assert len([m for m in model.requests[3] if "not re-run" in m["content"]]) <= 1


def test_objects_that_are_no_policies_are_refused():
    with pytest.raises(TypeError):
        resolve_policies([object()])


async def test_policies_can_be_switched_on_a_live_agent(runtime):
    agent = CaveAgent(ScriptedModel([]), runtime, display=False)
    assert "rewind" in [p.name for p in agent.policies]
    agent.policies = "off"
    assert agent.policies == []
