"""FractionForPercent: a percentage answered as a fraction (no cell scaled by 100) is
questioned once; a value scaled, written with `%`, or outside (-1, 1) costs nothing."""

from cave_tui.agent.events import FinalResponseEvent, InterventionKind
from cave_tui.agent.policies import PRESETS
from cave_tui.agent.policies.fraction_for_percent import fractions
from tests.agent.policies.helpers import fenced, interventions, run_turn

TASK = "What percentage of flights left more than 6 minutes late? Answer format: @late_pct[value]"
SHARE = "share = (flights['dep_delay'] > 6).mean()\nfinal_answer(f'@late_pct[{share:.4f}]')"
SCALED = "pct = (flights['dep_delay'] > 6).mean() * 100\nfinal_answer(f'@late_pct[{pct:.2f}]')"


def test_the_values_read_are_the_percent_fields_or_the_one_value():
    assert fractions("@late_pct[0.6667]", ["late_pct"]) == [("late_pct", "0.6667")]
    assert fractions("@growth[-0.008]", ["growth"]) == [("growth", "-0.008")]  # its one field
    two = "@r[0.61], @pct_late[0.25]"
    assert fractions(two, ["r", "pct_late"]) == [("pct_late", "0.25")]  # not the correlation
    assert fractions(two, ["r", "n"]) == []  # two fields, none named a percent
    assert fractions("0.42", []) == [("", "0.42")]
    for answer in ("@late_pct[66.67]", "@late_pct[0]", "@late_pct[0.5%]", "@late_pct[1]"):
        assert fractions(answer, ["late_pct"]) == [], answer
    assert fractions("About 0.42 of them.", []) == []  # prose: not one number


async def test_a_fraction_for_a_percentage_is_questioned_once_then_taken(runtime):
    events, model, _ = await run_turn(
        runtime, [fenced(SHARE), fenced(SCALED)], TASK, policies="small"
    )
    assert interventions(events).count(("fraction_for_percent", InterventionKind.DOUBT)) == 1
    assert "@late_pct[0.6667]" in model.requests[1][-1]["content"]
    assert [e.content for e in events if isinstance(e, FinalResponseEvent)] == ["@late_pct[66.67]"]


async def test_a_small_percentage_given_again_is_taken(runtime):
    again = fenced("final_answer(f'@late_pct[{share:.4f}]')")
    events, model, _ = await run_turn(runtime, [fenced(SHARE), again], TASK, policies="small")
    assert len(model.requests) == 2  # asked once, never twice
    assert [e.content for e in events if isinstance(e, FinalResponseEvent)] == ["@late_pct[0.6667]"]


async def test_scaled_code_or_no_percentage_asked_costs_nothing(runtime):
    spec = "share = (flights['dep_delay'] > 6).mean()\nfinal_answer(f'@late_pct[{share:.2%}]')"
    for code, task in (
        (SCALED, TASK),
        (spec, TASK),  # the `%` format spec scales it
        (SHARE, "What share of flights left late? Answer format: @late_pct[value]"),
    ):
        events, model, _ = await run_turn(runtime, [fenced(code)], task, policies="small")
        assert len(model.requests) == 1, code
        assert not [i for i in interventions(events) if i[0] == "fraction_for_percent"]


def test_in_small_and_strict_only():
    assert all("fraction_for_percent" in PRESETS[p] for p in ("small", "strict"))
    assert all("fraction_for_percent" not in PRESETS[p] for p in ("guided", "lean", "minimal"))
