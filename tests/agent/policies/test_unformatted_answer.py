"""UnformattedAnswer: an answer holding `{name}` placeholders of namespace variables (an
f-string without its `f`) is questioned once; braces around anything else are left alone."""

from cave_tui.agent.events import FinalResponseEvent, InterventionKind
from cave_tui.agent.policies import PRESETS
from cave_tui.agent.policies.unformatted_answer import placeholders
from tests.agent.policies.helpers import fenced, interventions, run_turn

TASK = "Mean delay? Answer format: @mean[value]."
COMPUTE = "m = flights['dep_delay'].mean()\n"


async def test_a_template_never_formatted_is_questioned_and_then_taken(runtime):
    template = fenced(COMPUTE + 'final_answer("@mean[{m:.2f}]")')
    formatted = fenced('final_answer(f"@mean[{m:.2f}]")')
    events, model, _ = await run_turn(runtime, [template, formatted], TASK, policies="small")
    assert ("unformatted_answer", InterventionKind.DOUBT) in interventions(events)
    assert "`{m:.2f}`" in model.requests[1][-1]["content"]
    final = [e.content for e in events if isinstance(e, FinalResponseEvent)]
    assert final == ["@mean[7.33]"]


async def test_braces_that_are_no_placeholder_of_a_variable_cost_nothing(runtime):
    for answer in ("{'AA', 'UA'}", '{"carrier": "AA"}', "Hello {user}!", "{m}"):
        code = fenced(f"final_answer({answer!r})")
        events, model, _ = await run_turn(runtime, [code], "Say it.", policies="small")
        assert len(model.requests) == 1, answer  # `m` is no variable in the namespace here
        assert ("unformatted_answer", InterventionKind.DOUBT) not in interventions(events)


def test_placeholders_are_read_as_str_format_fields():
    names = {"t", "p", "rows"}
    text = "@t[{t:.2f}] @p[{p!r}] {rows[0]} {rows.shape} {t} {other} {{t}} {1}"
    assert placeholders(text, names) == ["{t:.2f}", "{p!r}", "{rows[0]}", "{rows.shape}", "{t}"]


def test_a_field_that_computes_from_a_variable_is_a_placeholder_too():
    names = {"stat", "p_value", "groups"}
    text = (
        "@stat[{round(stat, 2)}] @p[{p_value * 100:.1f}%] @n[{len(groups)}] @ok[{p_value < 0.05}]"
        ' {x=} {"p_value": 1} {1, 2} {max(1, 2)} {{round(stat, 2)}} {(((}'
    )
    assert placeholders(text, names) == [
        "{round(stat, 2)}", "{p_value * 100:.1f}", "{len(groups)}", "{p_value < 0.05}"
    ]  # fmt: skip
    assert placeholders("{stat=}", names) == ["{stat=}"]
    assert placeholders("{" * 5000 + "stat" + "}" * 5000, names) == []  # no field, quickly


def test_in_small_and_strict_only():
    assert all("unformatted_answer" in PRESETS[p] for p in ("small", "strict"))
    assert all("unformatted_answer" not in PRESETS[p] for p in ("guided", "lean", "minimal"))
