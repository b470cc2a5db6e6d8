"""LookFirst: an answer given in the cell that first stored its result waits for one look
when the result shows a warning sign (LookAlways: every time); an answer whose numbers no
cell produced is asked to compute them. Once per turn."""

import numpy as np
import pandas as pd
import pytest

from cave_tui.agent.events import FinalResponseEvent, InterventionKind
from cave_tui.agent.policies.look_first import describe_value, unproduced, warning_signs
from cave_tui.runtime import IPythonRuntime, Variable

from .helpers import fenced, interventions, run_turn

SMALL = {"policies": "small"}
ALWAYS = {"policies": "small,look_always,-look_first"}
CODES = pd.DataFrame({"code": ["AA", "UA"], "name": ["American", "United"]})


def _looks(events, name: str = "look_first") -> list:
    return [iv for iv in interventions(events) if iv[0] == name]


def _told(model, text: str) -> bool:
    """The model's second request carries *text*."""
    return any(text in str(m.get("content")) for m in model.requests[1])


def test_a_stored_value_is_described_with_its_shape_values_and_missing_count():
    s = pd.Series([1.5, np.nan, 3.0], index=pd.Index(["a", "b", "c"], name="k"))
    text = describe_value(s)
    assert "Series of 3 (float64), 1 missing" in text and "a: 1.5" in text
    frame = describe_value(pd.DataFrame({"x": [1, None]}))
    assert "DataFrame 2x1, 1 missing cells" in frame
    assert describe_value(float("nan")) == "nan (a missing value)"


def test_numbers_count_as_produced_when_a_cell_printed_them_rounded_or_as_a_percent():
    assert unproduced("The mean is 29.70.", ["29.6981"]) == []
    assert unproduced("12.5% of rows", ["0.125"]) == []
    assert unproduced("There are 1,204 flights", ["1204"]) == []
    assert unproduced("The mean age is 31.2", ["29.6981", "mean age"]) == ["31.2"]


def test_warning_signs_are_read_from_the_value_alone():
    assert warning_signs(pd.Series([0.5, 1.5])) == []
    assert warning_signs(pd.Series([1.0, np.nan])) == ["1 missing value"]
    assert warning_signs(pd.Series([0.01, 0.01, 0.01])) == ["the same value in every row"]
    assert warning_signs(pd.DataFrame({"x": [2, 2]})) == ["the same value in every row"]
    assert warning_signs(pd.DataFrame({"x": [1, 2], "y": [3, 3]})) == []  # a frame's column
    assert warning_signs(pd.Series([], dtype=float)) == ["it is empty"]
    assert warning_signs([]) == ["it is empty"] and warning_signs(float("nan")) == ["it is missing"]
    assert warning_signs(42) == [] and warning_signs(pd.Series([7])) == []


async def test_a_clean_result_stored_and_answered_in_one_cell_is_taken_at_once(runtime):
    code = "by_carrier = flights.groupby('carrier')['dep_delay'].mean()\nfinal_answer('done')"
    events, model, _ = await run_turn(
        runtime, [fenced(code)], "Store the mean dep_delay per carrier in `by_carrier`.", **SMALL
    )
    assert _looks(events) == [] and len(model.requests) == 1


async def test_a_result_with_a_warning_sign_is_shown_with_the_sign_before_it_is_taken(runtime):
    code = "share = flights.groupby('carrier')['dep_delay'].count() * 0\nfinal_answer('done')"
    events, model, _ = await run_turn(
        runtime,
        [fenced(code), "The share per carrier is stored in `share`."],
        "Store the share of flights per carrier in `share`.",
        **SMALL,
    )
    assert _looks(events) == [("look_first", InterventionKind.DOUBT)]
    assert _told(model, "`share`: Series of 2 (int64), 0 missing")
    assert _told(model, "(note: the same value in every row)")
    assert len(model.requests) == 2


async def test_look_always_shows_a_clean_result_once_then_takes_it(runtime):
    code = "by_carrier = flights.groupby('carrier')['dep_delay'].mean()\nfinal_answer('done')"
    events, model, _ = await run_turn(
        runtime,
        [fenced(code), "The mean delay per carrier is stored in `by_carrier`."],
        "Store the mean dep_delay per carrier in `by_carrier`.",
        **ALWAYS,
    )
    assert _looks(events, "look_always") == [("look_always", InterventionKind.DOUBT)]
    note = next(e.content for e in events if getattr(e, "policy", "") == "look_always")
    assert "`by_carrier`: Series of 2 (float64), 0 missing" in note and "AA: 6.0" in note
    assert len(model.requests) == 2  # one look, then the plain-text reply confirms it
    assert events[-1].content == "done"  # the answer looked at; the reply is prose


async def test_the_look_lets_the_model_fix_codes_stored_where_names_were_asked():
    runtime = IPythonRuntime(variables=[Variable("airlines", CODES.copy())])
    wrong = "top = airlines['code'].head(1)\nfinal_answer(top)"
    right = "top = airlines['name'].head(1)\nfinal_answer(top)"
    events, model, _ = await run_turn(
        runtime,
        [fenced(wrong), fenced(right)],
        "Store the full name of the first airline in `top`.",
        **ALWAYS,
    )
    assert len(_looks(events, "look_always")) == 1 and len(model.requests) == 2
    assert _told(model, "`top`: Series of 1 (str), 0 missing; index -: 0: 'AA'")
    assert list(await runtime.retrieve("top")) == ["American"]
    await runtime.stop()


async def test_a_given_object_changed_by_the_answering_cell_is_shown_with_the_result(runtime):
    code = "flights.drop(index=0, inplace=True)\nn = len(flights)\nfinal_answer(n)"
    events, _, _ = await run_turn(
        runtime, [fenced(code), "2 flights."], "Store the number of flights in `n`.", **SMALL
    )
    note = next(e.content for e in events if getattr(e, "policy", "") == "look_first")
    assert "`n`: int 2" in note
    assert "`flights`, given by the user, was changed: now DataFrame 2x2" in note


async def test_an_answer_that_stores_no_named_result_is_not_looked_at(runtime):
    code = "flights = flights.dropna()\nfinal_answer(len(flights))"
    events, model, _ = await run_turn(runtime, [fenced(code)], "Drop the empty rows.", **SMALL)
    assert _looks(events) == [] and len(model.requests) == 1


async def test_a_result_seen_in_an_earlier_cell_is_not_looked_at_again(runtime):
    first = "by_carrier = flights.groupby('carrier')['dep_delay'].mean()\nprint(by_carrier)"
    answer = "final_answer(by_carrier)"
    events, model, _ = await run_turn(
        runtime,
        [fenced(first), fenced(answer)],
        "Store the mean dep_delay per carrier in `by_carrier`.",
        **SMALL,
    )
    assert _looks(events) == [] and len(model.requests) == 2


async def test_a_number_no_cell_computed_is_asked_for_once(runtime):
    events, model, _ = await run_turn(
        runtime,
        ["The mean dep_delay is 8.5.", fenced("final_answer(flights['dep_delay'].mean())")],
        "What is the mean dep_delay?",
        **SMALL,
    )
    assert _looks(events) == [("look_first", InterventionKind.DOUBT)]
    assert _told(model, "No code of this turn produced 8.5")
    assert not _told(model, "The mean dep_delay is 8.5.")  # the made-up reply is dropped
    assert "7.333" in events[-1].content


async def test_a_number_a_cell_printed_is_taken_at_once(runtime):
    events, model, _ = await run_turn(
        runtime,
        [fenced("print(flights['dep_delay'].mean())"), "The mean dep_delay is 7.33."],
        "What is the mean dep_delay?",
        **SMALL,
    )
    assert _looks(events) == [] and len(model.requests) == 2


@pytest.mark.parametrize("preset", ["lean", "guided", "small,-look_first", "strict,-look_always"])
async def test_the_look_is_off_in_the_lean_preset_and_can_be_switched_off(runtime, preset):
    code = "share = flights.groupby('carrier')['dep_delay'].count() * 0\nfinal_answer('done')"
    events, model, _ = await run_turn(
        runtime, [fenced(code)], "Store the share per carrier in `share`.", policies=preset
    )
    assert _looks(events) + _looks(events, "look_always") == [] and len(model.requests) == 1


def test_the_one_line_a_front_end_shows_names_what_was_stored() -> None:
    """`--plain`, `cave run` and the chat show an intervention as one line: the look's
    line goes on with what it shows, not a dangling colon."""
    from cave_tui.agent import events as ev
    from cave_tui.agent.display import intervention_line
    from cave_tui.agent.policies.look_first import look_note

    note = look_note([("delays", "DataFrame 5×2, no missing values")], [])
    event = ev.InterventionEvent(note, policy="look_first", kind=ev.InterventionKind.DOUBT)
    line = intervention_line(event)
    assert line.startswith("[look_first doubt] Before this answer is final")
    assert line.endswith("(you have not seen it): `delays`: DataFrame 5×2, no missing values")
    hint = ev.InterventionEvent("one line\nmore", policy="error_hints")
    assert intervention_line(hint) == "[error_hints hint] one line"


ZEROED = "share = flights.groupby('carrier')['dep_delay'].count() * 0\n"
ASKED = "Store the share of flights per carrier in `share`."


async def test_a_bare_confirmation_keeps_the_answer_it_looked_at(runtime):
    answer = "The share per carrier is stored in `share`."
    events, _, _ = await run_turn(
        runtime,
        [fenced(ZEROED + f"final_answer({answer!r})"), "The answer is correct."],
        ASKED,
        **SMALL,
    )
    assert _looks(events) == [("look_first", InterventionKind.DOUBT)]
    (final,) = [e for e in events if isinstance(e, FinalResponseEvent)]
    assert final.content == answer and final.unseen  # front ends show it: it was not streamed


async def test_a_cell_run_after_the_look_drops_the_answer_it_looked_at(runtime):
    fixed = "share = flights.groupby('carrier')['dep_delay'].count() / len(flights)"
    events, model, _ = await run_turn(
        runtime,
        [fenced(ZEROED + "final_answer('zeros')"), fenced(fixed), "Fixed: `share` is right."],
        ASKED,
        **SMALL,
    )
    assert len(model.requests) == 3
    assert events[-1].content == "Fixed: `share` is right."


async def test_a_given_frame_that_only_gained_a_column_is_no_sign_by_itself(runtime):
    """Adding a column to a given frame loses nothing (the request often asks for it): with a
    clean result the answer is taken at once; a frame that lost rows is still shown."""
    code = (
        "flights['late'] = flights['dep_delay'] > 5\n"
        "by_carrier = flights.groupby('carrier')['dep_delay'].mean()\nfinal_answer('done')"
    )
    task = "Store the mean dep_delay per carrier in `by_carrier`."
    events, model, _ = await run_turn(runtime, [fenced(code)], task, **SMALL)
    assert _looks(events) == [] and len(model.requests) == 1

    code = code.replace(
        "flights['late'] = flights['dep_delay'] > 5", "flights.drop(index=0, inplace=True)"
    )
    code = code.replace("by_carrier", "by_origin")
    events, model, _ = await run_turn(
        runtime, [fenced(code), "It is right."], task.replace("by_carrier", "by_origin"), **SMALL
    )
    assert _looks(events) == [("look_first", InterventionKind.DOUBT)]
    assert _told(model, "`flights`, given by the user, was changed")
