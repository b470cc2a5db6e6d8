"""AnswerFormat: an answer missing a field the request's answer format names is questioned
once; an answer in the form, or a request without one, goes through at once."""

from cave_tui.agent.events import FinalResponseEvent, InterventionKind
from cave_tui.agent.policies import PRESETS
from cave_tui.agent.policies.answer_format import (
    asked_fields,
    computed_values,
    form_as_code,
    form_as_code_hint,
    format_note,
)
from tests.agent.policies.helpers import fenced, interventions, run_turn

ASKED = (
    "What is the mean departure delay? Answer format: @mean_delay[mean_delay_value], where "
    "mean_delay_value is rounded to 2 decimals."
)
MEAN = "m = round(flights['dep_delay'].mean(), 2)\n"


async def test_a_value_outside_the_form_is_questioned_and_then_given_in_it(runtime):
    bare = fenced(MEAN + "final_answer(m)")
    events, model, _ = await run_turn(runtime, [bare, "@mean_delay[7.33]"], ASKED)
    assert interventions(events) == [("answer_format", InterventionKind.DOUBT)]
    note = model.requests[1][-1]["content"]
    assert "@mean_delay[value]" in note and "e.g. `@mean_delay[7.33]`" in note
    assert events[-1].content == "@mean_delay[7.33]"


async def test_an_answer_in_the_form_costs_no_call(runtime):
    """A model that follows the form (every capable one) is never questioned."""
    cell = fenced(MEAN + "final_answer(f'@mean_delay[{m}]')")
    for policies in ("guided", "lean", "small", "strict"):
        events, model, _ = await run_turn(runtime, [cell], ASKED, policies=policies)
        assert len(model.requests) == 1 and events[-1].content == "@mean_delay[7.33]"
        assert ("answer_format", InterventionKind.DOUBT) not in interventions(events)


async def test_every_field_is_needed_and_the_question_comes_once(runtime):
    task = "Mean and max delay? Answer format: @mean[value], @max[value]."
    half = fenced("final_answer(f\"@mean[{flights['dep_delay'].mean():.2f}]\")")
    events, model, _ = await run_turn(runtime, [half, "@mean[7.33]"], task)
    assert interventions(events) == [("answer_format", InterventionKind.DOUBT)]
    assert "@mean[value], @max[value]" in model.requests[1][-1]["content"]
    assert "e.g." not in model.requests[1][-1]["content"]  # two fields: no single example
    final = [e for e in events if isinstance(e, FinalResponseEvent)]
    assert [e.content for e in final] == ["@mean[7.33]"]  # asked once, then taken


async def test_a_request_without_a_form_is_never_read_further(runtime):
    cell = fenced(MEAN + "final_answer(m)")
    for task in ("What is the mean delay?", "Mail ops@team[at]example.org the mean delay."):
        events, model, _ = await run_turn(runtime, [cell], task)
        assert len(model.requests) == 1 and interventions(events) == []


def test_fields_are_read_from_the_form_not_from_addresses():
    assert asked_fields(ASKED) == ["mean_delay"]
    assert asked_fields("@a[x] then @b[y], @a[z]; user@host[1] and x.@c[2]") == ["a", "b"]
    assert "e.g." not in format_note(["r"], "@0.000")  # not a plain value: no example


def test_every_preset_but_off_and_minimal_has_it():
    assert all("answer_format" in PRESETS[p] for p in ("guided", "lean", "small", "strict"))
    assert "answer_format" not in PRESETS["off"] + PRESETS["minimal"]


async def test_it_asks_after_another_doubt_the_form_the_computed_answer_dropped(runtime):
    """A made-up answer in the form is questioned by look_first; the computed answer that
    follows lacks the form and is questioned once more, by this policy alone."""
    made_up = "@mean_delay[1.00]"
    computed = fenced(MEAN + "final_answer(m)")
    events, model, _ = await run_turn(
        runtime, [made_up, computed, "@mean_delay[7.33]"], ASKED, policies="small"
    )
    assert interventions(events) == [
        ("look_first", InterventionKind.DOUBT),
        ("answer_format", InterventionKind.DOUBT),
    ]
    assert len(model.requests) == 3 and events[-1].content == "@mean_delay[7.33]"


async def test_other_doubts_still_ask_once_a_turn(runtime):
    made_up, again = "@mean_delay[1.00]", "@mean_delay[2.00]"
    events, model, _ = await run_turn(runtime, [made_up, again], ASKED, policies="small")
    assert interventions(events) == [("look_first", InterventionKind.DOUBT)]
    assert len(model.requests) == 2 and events[-1].content == again


def test_plain_values_are_put_in_the_form_field_by_field():
    assert format_note(["year"], "1982").endswith("e.g. `@year[1982]`.")
    two = format_note(["r", "significant"], "0.604, yes")
    assert two.endswith("e.g. `@r[0.604], @significant[yes]`.")
    for answer in ("@31[@2]", "The correlation is 0.604, and it is significant.", "1\n2"):
        assert "e.g." not in format_note(["r", "significant"], answer)
    assert "e.g." not in format_note(["n"], "1, 2, 3, 4 " * 20)  # too long to be one value


async def test_the_form_written_as_code_gets_a_hint_with_the_fields(runtime):
    task = "Busiest carrier and its flights? Answer format: @carrier[name], @n[count]."
    as_code = fenced("top = flights['carrier'].mode()[0]\n@carrier[top], @n[2]")
    fixed = fenced(
        "top = flights['carrier'].mode()[0]\nn = int((flights['carrier'] == top).sum())\n"
        "final_answer(f'@carrier[{top}], @n[{n}]')"
    )
    events, model, _ = await run_turn(runtime, [as_code, fixed], task, policies="minimal")
    assert interventions(events) == [("error_hints", InterventionKind.HINT)]
    note = model.requests[1][-1]["content"]
    assert 'final_answer(f"@carrier[{carrier}], @n[{n}]")' in note
    assert events[-1].content == "@carrier[AA], @n[2]"


def test_a_field_written_as_a_variable_or_in_an_expression_is_the_form_as_code():
    task = "Largest firm and its size? Answer format: @largest_firm[name], @size[value]."
    for code in (
        "@largest_firm = df.loc[df['size'].idxmax(), 'firm']",
        "top = df['firm'].iloc[0]\nanswer = @largest_firm[top], @size[1]",
        "print(@size[3])",
        "if True:\n    @size[3]",
    ):
        assert form_as_code(code, task), code
    for code in (
        "final_answer(f'@largest_firm[{top}], @size[{n}]')",  # in a string: the right way
        "w = a @ size\nz = f(x) @size[0]\nv = m[0] @ size",  # matrix products
        "@other = 1",  # not a field the request names
        "x = (1",
    ):
        assert not form_as_code(code, task), code


def test_a_computed_value_written_where_the_fields_name_belongs_is_put_in_the_form():
    assert computed_values("@1982", ["year"]) == ["1982"]
    assert computed_values("@0.604, @yes", ["r", "significant"]) == ["0.604", "yes"]
    # The value put there and in the brackets (`f"@{n}[{n}]"`); a name of a few words.
    assert computed_values("@17[17]", ["n_years"]) == ["17"]
    assert computed_values("@District of Columbia, @24.2", ["state", "murder"]) == [
        "District of Columbia",
        "24.2",
    ]
    for answer in ("@31[@2]", "@year", "@1982, @1983", "1982", "@year is 1982", "@a b c d"):
        assert computed_values(answer, ["year"]) is None, answer
    note = format_note(["year"], "@1982", computed=True)
    assert note.endswith("e.g. `@year[1982]`.")
    # Not computed (a reply without code): `@1982` may be a made-up number, not filled in.
    assert "e.g." not in format_note(["year"], "@1982")


async def test_a_cells_answer_with_the_value_for_the_name_gets_the_form_filled(runtime):
    task = "Busiest carrier? Answer format: @carrier[name]."
    wrong = fenced("top = flights['carrier'].mode()[0]\nfinal_answer(f'@{top}')")
    fixed = fenced("final_answer(f'@carrier[{top}]')")
    events, model, _ = await run_turn(
        runtime, [wrong, fixed], task, policies="minimal,answer_format"
    )
    assert "e.g. `@carrier[AA]`" in model.requests[1][-1]["content"]
    assert events[-1].content == "@carrier[AA]"


def test_the_hint_writes_the_cells_own_form_line_as_the_call():
    task = "Busiest carrier and its flights? Answer format: @carrier[name], @n[count]."
    hint = form_as_code_hint(task, "top = 1\n@carrier[df['c'].mode()[0]], @n[17 * 23 + 5]")
    assert hint.endswith(
        """e.g. final_answer(f"@carrier[{df['c'].mode()[0]}], @n[{17 * 23 + 5}]")."""
    )
    literal = (
        "@carrier['AA'], @n[31]",
        "@carrier[top], @n[31]",
    )  # made-up values: not written back
    for code in (
        "@carrier[top value], @n[1]",
        '@carrier[d["c"]]',
        "@carrier = 1",
        "x = @n[1] + 2",
        *literal,
    ):
        hint = form_as_code_hint(task, code)  # not an expression, not only the form
        assert hint.endswith('e.g. final_answer(f"@carrier[{carrier}], @n[{n}]").'), code


async def test_a_syntax_error_elsewhere_or_without_a_form_gets_no_such_hint(runtime):
    task = "Busiest carrier? Answer format: @carrier[name]."
    for code, asked in (("x = (1", task), ("@carrier[1]", "Busiest carrier?")):
        _events, model, _ = await run_turn(
            runtime, [fenced(code), fenced("final_answer('@carrier[AA]')")], asked
        )
        assert "not Python" not in model.requests[1][-1]["content"]


async def test_a_form_the_cell_printed_is_named_when_the_answer_drops_it(runtime):
    task = "Mean and max delay? Answer format: @mean[value], @max[value]."
    printed = fenced(
        "m, x = flights['dep_delay'].mean(), flights['dep_delay'].max()\n"
        "print(f'@mean[{m:.2f}], @max[{x:.0f}]')"
    )
    prose = fenced("final_answer('The mean is 7.33 and the max is 10.')")
    events, model, _ = await run_turn(
        runtime, [printed, prose, "@mean[7.33], @max[10]"], task, policies="minimal,answer_format"
    )
    assert interventions(events) == [("answer_format", InterventionKind.DOUBT)]
    assert "Your cell printed `@mean[7.33], @max[10]`" in model.requests[2][-1]["content"]
    assert events[-1].content == "@mean[7.33], @max[10]"
