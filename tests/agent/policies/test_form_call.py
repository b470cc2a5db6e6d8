"""form_call: a cell's final_answer() call written again with the answer form's fields, from
the model's own expressions; AnswerFormat gives it, and refuses the same call sent again."""

from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies.form_call import (
    answer_call,
    call_key,
    form_call,
    lacks_fields,
    only_the_call,
    with_form_call,
)
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


async def test_the_doubt_gives_the_call_and_the_same_call_again_runs_in_the_form(runtime):
    """The doubted call sent again as it was (temperature 0): run once written in the form
    from its own values, a REWRITE the user sees; the model's code stays in its context."""
    bare = fenced(MEAN + 'final_answer(f"@{m}[{m}]")')
    events, model, agent = await run_turn(runtime, [bare, bare], ASKED, policies="small")
    assert interventions(events) == [
        ("answer_format", InterventionKind.DOUBT),
        ("answer_format", InterventionKind.REWRITE),
    ]
    doubt = model.requests[1][-1]["content"]
    assert "e.g. `@mean_delay[7.33]`" in doubt, doubt
    assert "The call that gives it: final_answer(f'@mean_delay[{m}]')" in doubt
    assert len(model.requests) == 2 and events[-1].content == "@mean_delay[7.33]"
    rewrite = next(e for e in events if getattr(e, "kind", None) is InterventionKind.REWRITE)
    assert "it ran as final_answer(f'@mean_delay[{m}]')" in rewrite.content
    replies = [m["content"] for m in agent.history if m["role"] == "assistant"]
    assert replies[1] == bare  # what the model wrote, not what ran
    told = [m["content"] for m in agent.history if m["role"] == "user"]
    assert "it ran as final_answer(f'@mean_delay[{m}]')" in told[-1]  # the cell's observation


async def test_a_call_with_no_value_to_put_in_the_form_is_not_run_once(runtime):
    """Text the model typed (no value of its code to place): refused once, the next call
    samples; sent a second time, it runs and its answer is taken, as before."""
    prose = fenced('final_answer("The mean delay is about seven minutes.")')
    events, model, _ = await run_turn(runtime, [prose, prose, prose], ASKED, policies="small")
    kinds = [kind for policy, kind in interventions(events) if policy == "answer_format"]
    assert kinds == [InterventionKind.DOUBT, InterventionKind.REFUSE]
    refusal = model.requests[2][-1]["content"]
    assert "That final_answer call gives the same answer, not in the form." in refusal
    assert len(model.requests) == 3
    assert events[-1].content == "The mean delay is about seven minutes."


def test_the_fields_a_calls_written_text_lacks_are_read_before_it_runs():
    fields = ["state", "murder"]
    assert lacks_fields("final_answer(f'@{s}, @murder[{r}]')", fields) == ["state"]
    assert lacks_fields("final_answer('The rate is 24.2')", fields) == fields
    assert lacks_fields("final_answer(f'@state[{s}], @murder[{r}]')", fields) == []
    assert lacks_fields("final_answer(text)", fields) == []  # not known before it runs
    assert lacks_fields("final_answer(f'{text}')", fields) == []  # values only: the same
    assert lacks_fields("print(1)", fields) == []


async def test_a_changed_call_still_without_a_field_runs_in_the_form(runtime):
    task = "Mean and max delay? Answer format: @mean[value], @max[value]."
    first = fenced("a = flights['dep_delay'].mean()\nb = flights['dep_delay'].max()\n"
                   "final_answer(f'@{a:.2f}, @{b}')")  # fmt: skip
    half = fenced("final_answer(f'@{a:.2f}, @max[{b}]')")
    events, model, _ = await run_turn(runtime, [first, half], task, policies="small")
    assert [k for p, k in interventions(events) if p == "answer_format"] == [
        InterventionKind.DOUBT,
        InterventionKind.REWRITE,
    ]
    assert len(model.requests) == 2 and events[-1].content == "@mean[7.33], @max[10.0]"


def test_the_call_is_replaced_in_place_the_rest_of_the_cell_kept():
    code = "n = len(df)  # é\nfinal_answer(\n    f'@{n}'\n)\nprint('done')"
    assert with_form_call(code, ["n_rows"]) == (
        "n = len(df)  # é\nfinal_answer(f'@n_rows[{n}]')\nprint('done')"
    )
    assert with_form_call("final_answer('text')", ["n_rows"]) == ""
    # A line break Python does not count (form feed in a string): still the call replaced.
    odd = "note = 'a\x0cb'\nfinal_answer(f'@{n}')"
    assert with_form_call(odd, ["n_rows"]) in ("", "note = 'a\x0cb'\nfinal_answer(f'@n_rows[{n}]')")


def test_only_a_lone_call_is_the_call_alone():
    assert only_the_call("final_answer(f'@{n}')\n")
    assert not only_the_call("n = 2\nfinal_answer(n)")
    assert not only_the_call("print(n)") and not only_the_call("x = (")


async def test_the_same_call_after_a_changed_cell_is_left_to_run(runtime):
    """The call passes a variable the new cell set in the form: it is not the doubted answer
    again, and is not rewritten (that would wrap the form in a field)."""
    first = fenced(MEAN + "text = str(m)\nfinal_answer(text)")
    fixed = fenced("text = f'@mean_delay[{m}]'\nfinal_answer(text)")
    events, model, _ = await run_turn(runtime, [first, fixed], ASKED, policies="small")
    assert [k for p, k in interventions(events) if p == "answer_format"] == [InterventionKind.DOUBT]
    assert len(model.requests) == 2 and events[-1].content == "@mean_delay[7.33]"
