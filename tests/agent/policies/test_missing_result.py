"""MissingResult: an answer before the result the request names is stored."""

import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.policies.missing_result import missing_names, missing_note, stored_as
from cave_tui.agent.policies.request import result_names
from cave_tui.models import ScriptedModel
from cave_tui.runtime.shipped.summary import summarize


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


def test_the_missing_result_note_names_the_variable_the_turn_stored_instead():
    assert stored_as("farthest", {"farthest_name", "code"}, before=set()) == "farthest_name"
    assert stored_as("farthest", {"farthest_name", "farthest_code"}) is None  # ambiguous
    assert stored_as("farthest", {"farthest_name"}, before={"farthest_name"}) is None
    note = missing_note(["farthest"], {"farthest": "farthest_name"})
    assert "that exact name (`farthest = farthest_name`), then call final_answer." in note


async def test_a_report_of_an_error_a_rerun_cannot_fix_is_taken_one_timeout_is_not(runtime):
    from cave_tui.runtime import Function

    calls = {"n": 0}

    def fetch_rate(code: str) -> float:
        """The exchange rate of *code*; the service times out on the first call."""
        calls["n"] += 1
        if calls["n"] == 1:
            raise TimeoutError("the rate service did not answer within 5 s")
        return 0.5

    runtime.inject(Function(fetch_rate))
    ask = "Convert 1000 dollars with `fetch_rate`; store the euros in `eur`."
    model = ScriptedModel(
        [
            "```python\neur = fetch_rate('EUR') * 1000\n```",
            "The rate service did not answer within 5 s.",  # one timeout: worth a retry
            "```python\neur = fetch_rate('EUR') * 1000\nfinal_answer(eur)\n```",
        ]
    )
    agent = CaveAgent(model, runtime, display=False, policies="missing_result")
    response = await agent.run(ask)
    assert response.interventions == {"missing_result": 1}
    assert await runtime.retrieve("eur") == 500.0
    # A column that is not there: the report is the answer.
    model = ScriptedModel(
        ["```python\nprices = flights['price'].mean()\n```", "flights has no price column."]
    )
    agent = CaveAgent(model, runtime, display=False, policies="missing_result")
    response = await agent.run("Store the mean price in `prices`.")
    assert response.interventions == {} and len(model.requests) == 2
