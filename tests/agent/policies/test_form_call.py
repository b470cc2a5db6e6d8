"""form_call: a cell's final_answer() call written again with the answer form's fields, from
the model's own expressions; AnswerFormat gives it, and refuses the same call sent again."""

from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies.form_call import answer_call, call_key, form_call, lacks_fields
from tests.agent.policies.helpers import fenced, interventions, run_turn

ASKED = "What is the mean departure delay? Answer format: @mean_delay[mean_delay_value]."
MEAN = "m = round(flights['dep_delay'].mean(), 2)\n"


def test_values_where_the_names_belong_are_put_in_the_fields():
    assert form_call('final_answer(f"@{n}[{n}]")', ["n_years"]) == "final_answer(f'@n_years[{n}]')"
    two = form_call('final_answer(f"@{state}, @{rate:.1f}")', ["state", "murder"])
    assert two == "final_answer(f'@state[{state}], @murder[{rate:.1f}]')"
    one = form_call("x = 1\nfinal_answer(round(m, 2))", ["mean_delay"])
    assert one == "final_answer(f'@mean_delay[{round(m, 2)}]')"
    assert form_call("final_answer(df['a'].max())", ["top"]) == (
        "final_answer(f\"@top[{df['a'].max()}]\")"
    )


def test_a_call_that_does_not_pair_up_with_the_fields_gives_nothing():
    for code in (
        'final_answer("The r is 0.6")',  # text the model typed
        'final_answer("@t[{}]".format(t))',  # the form is in there already
        'final_answer(f"{a} and {b}")',  # two values, one field
        "final_answer(a)\nfinal_answer(b)",  # two calls
        "final_answer(a, b)",
        "print(a)",
        "x = (",
    ):
        assert form_call(code, ["t"]) == "", code
    assert form_call("final_answer(a)", []) == ""


def test_a_call_is_known_again_whatever_its_spacing():
    assert call_key("final_answer( f'@{n}' )") == call_key("x = 2\nfinal_answer(f'@{n}')")
    assert call_key("print(1)") == "" and answer_call("final_answer(1)") is not None


async def test_the_doubt_gives_the_call_and_the_same_call_again_is_not_run(runtime):
    bare = fenced(MEAN + 'final_answer(f"@{m}[{m}]")')
    events, model, _ = await run_turn(
        runtime, [bare, bare, fenced("final_answer(f'@mean_delay[{m}]')")], ASKED, policies="small"
    )
    assert interventions(events) == [
        ("answer_format", InterventionKind.DOUBT),
        ("answer_format", InterventionKind.REFUSE),
    ]
    doubt = model.requests[1][-1]["content"]
    assert "e.g. `@mean_delay[7.33]`" in doubt, doubt
    assert "The call that gives it: final_answer(f'@mean_delay[{m}]')" in doubt
    refusal = model.requests[2][-1]["content"]
    assert "That final_answer call gives the same answer, not in the form." in refusal
    assert len(model.requests) == 3 and events[-1].content == "@mean_delay[7.33]"


async def test_the_call_sent_again_a_second_time_runs(runtime):
    """Refused once a turn: a model that insists has its answer taken, as before."""
    bare = fenced(MEAN + 'final_answer(f"@{m}[{m}]")')
    events, model, _ = await run_turn(runtime, [bare, bare, bare], ASKED, policies="small")
    kinds = [kind for policy, kind in interventions(events) if policy == "answer_format"]
    assert kinds == [InterventionKind.DOUBT, InterventionKind.REFUSE]
    assert len(model.requests) == 3 and events[-1].content == "@7.33[7.33]"


def test_the_fields_a_calls_written_text_lacks_are_read_before_it_runs():
    fields = ["state", "murder"]
    assert lacks_fields("final_answer(f'@{s}, @murder[{r}]')", fields) == ["state"]
    assert lacks_fields("final_answer('The rate is 24.2')", fields) == fields
    assert lacks_fields("final_answer(f'@state[{s}], @murder[{r}]')", fields) == []
    assert lacks_fields("final_answer(text)", fields) == []  # not known before it runs
    assert lacks_fields("print(1)", fields) == []


async def test_a_changed_call_still_without_a_field_is_not_run_once(runtime):
    task = "Mean and max delay? Answer format: @mean[value], @max[value]."
    first = fenced("a = flights['dep_delay'].mean()\nb = flights['dep_delay'].max()\n"
                   "final_answer(f'@{a:.2f}, @{b}')")  # fmt: skip
    half = fenced("final_answer(f'@{a:.2f}, @max[{b}]')")
    whole = fenced("final_answer(f'@mean[{a:.2f}], @max[{b}]')")
    events, model, _ = await run_turn(runtime, [first, half, whole], task, policies="small")
    assert [k for p, k in interventions(events) if p == "answer_format"] == [
        InterventionKind.DOUBT,
        InterventionKind.REFUSE,
    ]
    assert (
        "That final_answer call gives an answer without @mean[...]."
        in (model.requests[2][-1]["content"])
    )
    assert events[-1].content == "@mean[7.33], @max[10.0]"
