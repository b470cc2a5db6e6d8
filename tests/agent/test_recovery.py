"""Rewinding a failing turn (agent/recovery.py), and doubting an empty or missing answer
(agent/answer_checks.py)."""

import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.answer_checks import (
    empty_results,
    missing_names,
    misspelt_values,
    result_names,
)
from cave_tui.agent.observation import FORMAT_MANY_HINT, error_hints
from cave_tui.agent.recovery import REWIND_FOOTER, REWIND_HEADER, failure_summary, rewound_request
from cave_tui.models import ScriptedModel
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.summary import summarize


def _contents(messages):
    return [m["content"] for m in messages]


async def test_two_failures_in_a_row_rewind_the_turn_to_the_request_plus_their_errors(runtime):
    first = "```python\nx = flights.loc['AA', 'dep_delay']\n```"
    second = "```python\nx = flights.loc['AA']\n```"
    fixed = "```python\nx = flights.loc[flights['carrier'] == 'AA', 'dep_delay'].sum()\n```"
    model = ScriptedModel([first, second, fixed, "Done: 12."])
    agent = CaveAgent(model, runtime, final_answer=False)
    events = [e async for e in agent.stream_events("Sum AA's delays into `x`.")]
    assert await runtime.retrieve("x") == 12.0
    # The third call sees no failed code: only the request, then what the failures taught.
    third = model.requests[2]
    assert [m["role"] for m in third] == ["system", "user"]
    text = third[-1]["content"]
    assert text.index("Sum AA's delays") < text.index(REWIND_HEADER) < text.index(REWIND_FOOTER)
    assert "KeyError: 'AA'" in text and "Hint:" in text
    assert "```" not in text and "[changed" not in text
    # History keeps the rewound request and what followed it, and stays well-formed.
    assert [m["role"] for m in agent.history] == ["user", "assistant", "user", "assistant"]
    notices = [e for e in events if isinstance(e, ev.NoticeEvent)]
    assert len(notices) == 1 and "retries" in notices[0].content
    # Every cell is still in the event stream: the rewind is the model's context only.
    assert len([e for e in events if isinstance(e, ev.CodeEvent)]) == 3


async def test_a_resent_failure_rewinds_and_samples(runtime):
    bad = "```python\nflights['nope']\n```"
    model = ScriptedModel([bad, bad, "```python\nok = 1\n```", "Done."])
    agent = CaveAgent(model, runtime, final_answer=False)
    assert (await agent.run("go")).content == "Done."
    assert await runtime.retrieve("ok") == 1
    assert "nope" not in _contents(model.requests[2])[-1].split(REWIND_HEADER)[0]
    assert [o.get("temperature") for o in model.options] == [None, None, 0.7, None]
    assert _contents(agent.history).count(bad) == 0


async def test_an_echoed_answer_after_a_failure_rewinds(runtime):
    model = ScriptedModel(
        [
            "```python\nflights['nope']\n```",
            "```python\nfinal_answer('No file is needed: use `flights`.')\n```",
            "```python\nn = len(flights)\nfinal_answer(f'{n} flights')\n```",
        ]
    )
    response = await CaveAgent(model, runtime).run("count")
    assert response.content == "3 flights"
    assert REWIND_HEADER in model.requests[2][-1]["content"]


async def test_rewinds_are_bounded_then_failures_stay_in_context(runtime):
    bad = [f"```python\nflights['nope{i}']\n```" for i in range(8)]
    model = ScriptedModel(bad)
    agent = CaveAgent(model, runtime, final_answer=False, max_steps=8)
    events = [e async for e in agent.stream_events("go")]
    assert len([e for e in events if isinstance(e, ev.NoticeEvent)]) == 2  # MAX_REWINDS
    # After the last rewind the failures pile up in context again, as without rewinds.
    assert len(model.requests[-1]) > 3
    off = ScriptedModel([*bad[:3], "Gave up."])
    await CaveAgent(off, runtime, final_answer=False, rewind=False).run("go")
    assert all(REWIND_HEADER not in r[-1]["content"] for r in off.requests)


async def test_a_rewind_never_reaches_into_an_earlier_turn(runtime):
    model = ScriptedModel(
        [
            "```python\na = 1\n```",
            "a is 1.",
            "```python\nflights['x1']\n```",
            "```python\nflights['x2']\n```",
            "Cannot.",
        ]
    )
    agent = CaveAgent(model, runtime, final_answer=False)
    await agent.run("set a")
    await agent.run("use x")
    contents = _contents(agent.history)
    assert contents[:4] == ["set a", "```python\na = 1\n```", contents[2], "a is 1."]
    assert contents[4].startswith("use x\n\n" + REWIND_HEADER) and contents[5] == "Cannot."


async def test_an_empty_final_answer_is_questioned_once(runtime):
    typo = "```python\nn = int((flights['carrier'] == 'UAL').sum())\nfinal_answer(f'{n}')\n```"
    fixed = "```python\nn = int((flights['carrier'] == 'UA').sum())\nfinal_answer(f'{n}')\n```"
    model = ScriptedModel([typo, fixed])
    response = await CaveAgent(model, runtime).run("How many UA flights? Store `n`.")
    assert response.content == "1" and response.steps == 2
    assert "`n` is empty or zero" in model.requests[1][-1]["content"]
    # Zero can be the true answer: the second final_answer is taken.
    again = ScriptedModel([typo, typo])
    response = await CaveAgent(again, runtime).run("How many UAL flights?")
    assert response.content == "0" and response.steps == 2


def test_empty_results_know_zero_nan_and_empty_containers():
    values = {
        "zero": 0,
        "nan": float("nan"),
        "none": None,
        "frame": pd.DataFrame({"a": []}),
        "series": pd.Series([], dtype=float),
        "lst": [],
        "text": "",
        "one": 1,
        "full": pd.DataFrame({"a": [1]}),
        "name": "Honolulu Intl",
    }
    rows = [summarize(name, value) for name, value in values.items()]
    assert empty_results(rows, values) == ["zero", "nan", "none", "frame", "series", "lst", "text"]
    assert empty_results(rows, ["one"]) == []  # only the cell's changed names are looked at


def test_failure_summary_and_rewound_request():
    error = (
        "Traceback (most recent call last):\n"
        '  File "<cell>", line 2, in <module>\n'
        "    y = df.loc['HNL']\n"
        "KeyError: 'HNL'\n"
    )
    result = ExecutionResult(
        success=False, output="row\n" * 500, error=error, error_type="KeyError", changed=["y"]
    )
    summary = failure_summary(result, ["pick rows by value"])
    lines = summary.splitlines()
    assert lines[-2:] == ["KeyError: 'HNL'", "Hint: pick rows by value"]
    assert any("y = df.loc['HNL']" in line for line in lines)
    assert "row" not in lines and not any("changed" in line for line in lines)  # printed: gone
    long = ExecutionResult(success=False, error="ValueError: " + "x" * 5000)
    assert len(failure_summary(long)) < 1300  # 1,200 and the cut marker
    blocked = ExecutionResult(success=False, security_violations=["import os is not allowed"])
    assert failure_summary(blocked).splitlines() == [
        "Blocked by the security policy:",
        "- import os is not allowed",
    ]
    assert rewound_request("task", []) == "task"
    text = rewound_request("task", ["a", "b", "a", "c"])
    assert text == f"task\n\n{REWIND_HEADER}\nb\nc\n{REWIND_FOOTER}"  # distinct, latest two


def test_values_spelt_unlike_the_request_are_found():
    request = "How many planes made by EMBRAER are in the registry? Store it in `n_embraer`."
    code = "n_embraer = fleet.by_manufacturer('EMBRERAER').shape[0]"
    assert misspelt_values(code, request) == [("EMBRERAER", "EMBRAER")]
    # Same word in another case, a column name, a plural, a short or spaced string: not taken.
    assert misspelt_values("fleet.by_manufacturer('embraer')", request) == []
    assert misspelt_values("df['planes'] + df['registy']", request, known=["registy"]) == []
    assert misspelt_values("df['plane']", request) == []
    assert misspelt_values("x = 'Ab' + 'EMBRAER INC'", request) == []
    assert misspelt_values("not python (", request) == []
    assert misspelt_values("pd.read_csv('planes.csv')", request) == []  # made from a word


async def test_the_empty_answer_note_names_a_misspelt_value(runtime):
    typo = "```python\nn = int((flights['carrier'] == 'Unitd').sum())\nfinal_answer(f'{n}')\n```"
    model = ScriptedModel([typo, "Zero."])
    await CaveAgent(model, runtime).run("How many flights are by United? Store `n`.")
    assert (
        "The code uses 'Unitd'; the request spells it 'United'." in model.requests[1][-1]["content"]
    )


def test_a_column_no_frame_has_gets_the_merge_that_would_bring_it():
    missing = ExecutionResult(
        success=False, error="KeyError: 'Column not found: airline'", error_type="KeyError"
    )
    frames = {
        "flights": {"carrier": "str", "dest": "str"},
        "airlines": {"carrier": "str", "name": "str"},
    }
    code = "flights.groupby('carrier')['airline'].size()"
    assert error_hints(code, missing, frames) == [
        "There is no column 'airline' in flights. To use the columns of airlines (name), merge "
        "first: flights.merge(airlines, on='carrier'), then use 'name'."
    ]
    # No frame shares a column with the one used: its columns are listed.
    assert error_hints("airlines['airline']", missing, {"airlines": {"carrier": "str"}}) == [
        "There is no column 'airline' in airlines; its columns: carrier."
    ]


def test_a_missing_key_subscripted_on_a_frame_is_a_column_not_a_row():
    missing = ExecutionResult(success=False, error="KeyError: 'airline'", error_type="KeyError")
    frames = {"merged": {"carrier": "str", "name": "str"}, "airports": {"faa": "str"}}
    assert error_hints("merged['airline'].value_counts()", missing, frames) == [
        "There is no column 'airline' in merged; its columns: carrier, name."
    ]
    assert error_hints("flights.merge(a, on='c')['airline']", missing, frames) == [
        "There is no column 'airline': the Namespace lists each frame's columns."
    ]
    # `.loc['HNL']` and a dict's key stay row / lookup hints.
    row = ExecutionResult(success=False, error="KeyError: 'HNL'", error_type="KeyError")
    assert "index label of airports" in error_hints("airports.loc['HNL']", row, frames)[0]
    assert "index label here" in error_hints("d['HNL']", row, frames)[0]


def test_missing_names_are_the_results_a_request_asks_to_store_and_the_turn_did_not():
    rows = [summarize("flights", pd.DataFrame({"dep_time": [1.0]})), summarize("late", 1)]
    ask = "Count the flights in `late` per `dep_time`; store the Series in `late_counts`."
    assert result_names(ask) == ["late", "dep_time", "late_counts"]
    assert result_names("What does `groupby` do?") == []  # nothing to store
    assert result_names("Make `class` and `n`") == ["n"]
    # `late` was there before the turn (an input), `dep_time` is a column.
    assert missing_names(result_names(ask), rows, before={"flights", "late"}) == ["late_counts"]
    rows.append(summarize("late_counts", pd.Series([1])))
    assert missing_names(result_names(ask), rows, before={"flights", "late"}) == []
    # Defined, but only by a cell that failed: still missing.
    assert missing_names(["late_counts"], rows, stored=set()) == ["late_counts"]
    assert missing_names(["late_counts"], rows, stored={"late_counts"}) == []


async def test_an_answer_before_the_asked_variable_exists_is_questioned_once(runtime):
    model = ScriptedModel(
        ["There are 3.", "```python\nn = len(flights)\nfinal_answer(f'{n}')\n```"]
    )
    events = [e async for e in CaveAgent(model, runtime).stream_events("Store the count in `n`.")]
    assert await runtime.retrieve("n") == 3
    assert "store its result in `n`" in model.requests[1][-1]["content"]
    assert [e.content for e in events if isinstance(e, ev.FinalResponseEvent)] == ["3"]
    # Through final_answer: the same question, once; then the answer is taken as it is.
    talk = "```python\nfinal_answer('done')\n```"
    model = ScriptedModel(["```python\nm = 1\n```", talk, talk])
    response = await CaveAgent(model, runtime).run("Store it in `total`.")
    assert "store its result in `total`" in model.requests[2][-1]["content"]
    assert response.content == "done" and response.steps == 3


async def test_a_result_set_only_by_a_failed_cell_is_asked_for_again(runtime):
    failed = "```python\nbest = 'AA'\nname = flights.loc[best, 'x']\n```"
    other = "```python\nbest_name = 'American'\nfinal_answer(best_name)\n```"
    fixed = "```python\nbest = best_name\nfinal_answer(best)\n```"
    model = ScriptedModel([failed, other, fixed])
    response = await CaveAgent(model, runtime).run("Store the best carrier's name in `best`.")
    assert response.content == "American" and await runtime.retrieve("best") == "American"
    assert "store its result in `best`" in model.requests[2][-1]["content"]


async def test_a_result_stored_by_the_answering_cell_is_taken_at_once(runtime):
    model = ScriptedModel(["```python\nk = len(flights)\nfinal_answer(f'{k}')\n```"])
    response = await CaveAgent(model, runtime).run("Store the count in `k`.")
    assert response.content == "3" and response.steps == 1


async def test_formatting_a_series_as_one_number_is_named(runtime):
    code = "ua = flights['dep_delay'] * 2\nf'{ua:.2f}'"
    result = await runtime.execute(code)
    assert error_hints(code, result, {}) == [FORMAT_MANY_HINT]
