"""The evaluation suite's machinery, with ScriptedModel: no real model, fast, in the default run.

Every task's reference solution (the default suite's and the held-out set's), replayed through
the real agent loop and a real IPython runtime, must pass its checker; wrong answers must fail
it; tolerant variants of the truth (a 1-column frame, a dict, another order) must pass.
"""

from __future__ import annotations

import asyncio
import json

import numpy as np
import pandas as pd
import pytest
from agent_eval import (
    TaskRun,
    UpstreamStyleAgent,
    make_runtime,
    report_rows,
    run_task,
    summarize,
    token_ratio,
)
from agent_eval import main as agent_eval_main
from eval_fresh import FRESH_TASKS
from eval_holdout import HOLDOUT_TASKS
from eval_tasks import TASKS, HasColumn, Rows, _pristine, check, select

from cave_tui.models import ScriptedModel
from cave_tui.runtime import Function, Type, Variable

FLAKY = "fr_flaky_rate"  # its function times out once: replayed apart, with the resend
ALL_TASKS = [*TASKS, *HOLDOUT_TASKS, *(t for t in FRESH_TASKS if t.name != FLAKY)]


def fence(code: str) -> str:
    return f"I will run this.\n```python\n{code}\n```"


def solution_script(task) -> list[str]:
    replies: list[str] = []
    for code in task.solution:
        replies += [fence(code), "Done."]
    return replies


# -- the suite's shape ---------------------------------------------------------------------------


def test_suite_has_the_required_classes_of_task():
    assert len(TASKS) >= 15
    assert len({t.name for t in TASKS}) == len(TASKS)
    multi = [t for t in TASKS if len(t.turns) > 1]
    assert len(multi) >= 4
    data = _pristine()
    kinds = {type(i).__name__ for t in TASKS for i in t.inject(data)}
    assert {"Variable", "Function", "Type"} <= kinds
    instances = [
        i
        for t in TASKS
        for i in t.inject(data)
        if isinstance(i, Variable) and not isinstance(i.value, pd.DataFrame)
    ]
    assert instances, "some task must inject an instance of a class with methods"
    tables = {i.name for t in TASKS for i in t.inject(data) if isinstance(i, Variable)}
    assert {"flights", "airlines", "airports", "planes", "weather", "penguins"} <= tables
    for task in TASKS:
        assert len(task.solution) == len(task.turns), task.name
        assert task.retrieve, task.name


def test_held_out_tasks_cover_the_same_classes():
    assert len(HOLDOUT_TASKS) == 8
    names = [t.name for t in HOLDOUT_TASKS]
    assert all(n.startswith("ho_") for n in names)
    assert len(set(names)) == len(names)
    assert not set(names) & {t.name for t in TASKS}
    kinds = [t.kind for t in HOLDOUT_TASKS]
    assert {k: kinds.count(k) for k in kinds} == {
        "frame": 2,
        "join": 2,
        "function": 1,
        "object": 1,
        "multi-turn": 2,
    }
    data = _pristine()
    for task in HOLDOUT_TASKS:
        assert len(task.solution) == len(task.turns), task.name
        assert task.retrieve, task.name
        if task.kind == "multi-turn":
            assert 2 <= len(task.turns) <= 3, task.name
    items = {type(i).__name__ for t in HOLDOUT_TASKS for i in t.inject(data)}
    assert {"Variable", "Function", "Type"} <= items


def test_later_turns_use_variables_made_earlier():
    for task in (t for t in ALL_TASKS if len(t.turns) > 1):
        made_earlier = set(task.retrieve) - {
            i.name for i in task.inject(_pristine()) if hasattr(i, "name")
        }
        later_text = " ".join(task.turns[1:])
        used = [name for name in made_earlier if f"`{name}`" in later_text]
        assert used, f"{task.name}: no later turn names a variable made by an earlier one"


def test_select_by_name_and_kind():
    assert [t.name for t in select("busiest_route")] == ["busiest_route"]
    assert all(t.kind == "multi-turn" for t in select("multi-turn"))
    assert len(select("")) == len(TASKS)
    with pytest.raises(ValueError, match="unknown task 'nope'"):
        select("nope")


def test_held_out_tasks_are_selected_only_by_name():
    assert select("") == TASKS and select(None) == TASKS
    assert not {t.name for t in select("")} & {t.name for t in HOLDOUT_TASKS}
    assert [t.name for t in select("holdout")] == [t.name for t in HOLDOUT_TASKS]
    assert len(select("holdout")) == 8
    assert [t.name for t in select("ho_mt_mass_gap")] == ["ho_mt_mass_gap"]
    # A kind selects from the default suite only.
    assert not any(t.name.startswith("ho_") for t in select("frame,multi-turn"))
    both = select("busiest_route,holdout,ho_heavy_gentoo")
    assert [t.name for t in both] == ["busiest_route", *(t.name for t in HOLDOUT_TASKS)]
    with pytest.raises(ValueError, match="holdout") as err:
        select("ho_nope")
    assert "ho_mt_mass_gap" in str(err.value) and "busiest_route" in str(err.value)


def test_list_shows_the_held_out_tasks_without_a_server(capsys):
    assert agent_eval_main(["--tasks", "holdout", "--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == [t.name for t in HOLDOUT_TASKS]
    assert agent_eval_main(["--list"]) == 0
    listed = [line.split()[0] for line in capsys.readouterr().out.splitlines()]
    assert listed == [t.name for t in TASKS]


# -- checkers ------------------------------------------------------------------------------------


def _truths():
    for task in ALL_TASKS:
        for name, expected in task.truth(_pristine()).items():
            yield pytest.param(expected, id=f"{task.name}.{name}")


def _value_of(expected):
    """A correct actual value for a ground-truth spec."""
    if isinstance(expected, Rows):
        return pd.DataFrame({c: range(expected.n) for c in (expected.columns or ["x"])})
    if isinstance(expected, HasColumn):
        return pd.DataFrame({expected.column: expected.values.to_numpy()})
    return expected


def _tolerant_variants(expected):
    if isinstance(expected, pd.Series):
        yield expected.to_frame()
        yield expected.to_dict()
        yield expected.reset_index()
        yield expected.iloc[::-1]
        if pd.api.types.is_float_dtype(expected):
            yield expected * (1 + 1e-9)
    elif isinstance(expected, tuple):
        yield list(expected)
    elif isinstance(expected, str):
        yield f" {expected.upper()} "
    elif isinstance(expected, int | float | np.number):
        yield np.float64(expected)
        yield pd.Series([expected])


def _wrong_variants(expected):
    if isinstance(expected, Rows):
        yield pd.DataFrame({c: range(expected.n - 1) for c in (expected.columns or ["x"])})
        yield pd.DataFrame({"other": range(expected.n)}) if expected.columns else None
        yield list(range(expected.n))
    elif isinstance(expected, HasColumn):
        yield pd.DataFrame({expected.column: expected.values.to_numpy()[::-1]})
        yield pd.DataFrame({"other": expected.values.to_numpy()})
    elif isinstance(expected, pd.Series):
        if pd.api.types.is_numeric_dtype(expected):
            yield expected * 1.1 + 1
        else:
            yield expected.map(lambda v: f"{v}x")
        yield expected.iloc[1:]
        yield expected.index.tolist()
    elif isinstance(expected, tuple):
        yield tuple(reversed(expected))
        yield " ".join(expected)
    elif isinstance(expected, str):
        yield expected + " North"
        yield None
    else:
        yield expected * 1.1 + 1
        yield str(expected)
        yield None


@pytest.mark.parametrize("expected", _truths())
def test_checker_accepts_the_pandas_ground_truth_and_tolerant_variants(expected):
    verdict = check(_value_of(expected), expected)
    assert verdict.ok, verdict.reason
    for variant in _tolerant_variants(expected):
        verdict = check(variant, expected)
        assert verdict.ok, f"{type(variant).__name__}: {verdict.reason}"


@pytest.mark.parametrize("expected", _truths())
def test_checker_rejects_wrong_answers_with_a_reason(expected):
    for wrong in _wrong_variants(expected):
        if wrong is None and isinstance(expected, Rows | HasColumn):
            continue
        verdict = check(wrong, expected)
        assert not verdict.ok, f"accepted a wrong {type(wrong).__name__}"
        assert verdict.reason


# -- full runs through the real agent loop --------------------------------------------------------


@pytest.mark.parametrize("task", ALL_TASKS, ids=[t.name for t in ALL_TASKS])
async def test_reference_solution_solves_the_task_through_the_agent(task):
    model = ScriptedModel(solution_script(task))
    run = await run_task(task, model, "cave", max_steps=4, time_cap=60)
    assert run.success, run.checks
    assert set(run.checks) == set(task.retrieve)
    assert run.statuses == ["completed"] * len(task.turns)
    assert run.steps == run.model_calls == 2 * len(task.turns)
    assert run.prompt_tokens > 0 and run.completion_tokens > 0
    # The model had to use the injected objects by name: nothing was loaded from files.
    first = model.requests[0]
    assert "Namespace" in first[-1]["content"]


async def test_the_flaky_task_is_solved_by_sending_the_cell_again():
    task = select(FLAKY)[0]
    cell = fence(task.solution[0])
    run = await run_task(task, ScriptedModel([cell, cell, "Done."]), "cave", time_cap=60)
    assert run.success, run.checks
    assert run.model_calls == 3 and not {"repeat_guard", "rewind"} & set(run.interventions)


def test_fresh_tasks_are_apart_from_the_suite_and_the_held_out_set():
    names = [t.name for t in FRESH_TASKS]
    assert len(names) == len(set(names)) >= 10 and all(n.startswith("fr_") for n in names)
    assert not set(names) & {t.name for t in [*TASKS, *HOLDOUT_TASKS]}
    assert [t.name for t in select("fresh")] == names
    for task in FRESH_TASKS:
        assert len(task.solution) == len(task.turns), task.name


async def test_a_wrong_answer_fails_with_the_checker_reason():
    task = select("busiest_route")[0]
    model = ScriptedModel([fence("top_route = ('LGA', 'ATL')"), "Done."])
    run = await run_task(task, model, "cave")
    assert not run.success
    assert "expected 'JFK'" in run.checks["top_route"]


async def test_a_missing_variable_fails_as_not_defined():
    task = select("complete_penguins")[0]
    run = await run_task(task, ScriptedModel(["It is 333.", "It is 333."]), "cave")
    assert not run.success
    assert run.checks == {"n_complete": "not defined"}
    assert run.steps == 2  # asked once to store `n_complete`; the second answer is taken


async def test_time_cap_cancels_the_run_and_counts_as_failure():
    task = select("complete_penguins")[0]
    model = ScriptedModel([fence("import time\nn_complete = 333\ntime.sleep(30)"), "Done."])
    started = asyncio.get_running_loop().time()
    run = await run_task(task, model, "cave", time_cap=1.0, exec_timeout=60)
    assert asyncio.get_running_loop().time() - started < 10
    assert run.timed_out and not run.success
    assert run.statuses == ["timed_out"]
    assert run.model_calls == 1 and run.prompt_tokens > 0  # usage of the cancelled turn kept


async def test_multi_turn_history_and_namespace_carry_over():
    task = select("mt_adelie")[0]
    model = ScriptedModel(solution_script(task))
    transcript: dict = {}
    run = await run_task(task, model, "cave", transcript=transcript)
    assert run.success
    # The second turn's first request shows `adelie`, made in the first turn, live.
    second_turn = model.requests[2]
    assert "- adelie: DataFrame" in second_turn[-1]["content"]
    assert transcript["history"][0]["content"] == task.turns[0]
    assert transcript["checks"] == {k: "ok" for k in task.retrieve}


async def test_upstream_prompt_describes_injected_items_in_upstream_style():
    task = select("mt_fleet_old")[0]
    model = ScriptedModel(solution_script(task))
    run = await run_task(task, model, "upstream")
    assert run.success, run.checks
    system = model.requests[0][0]["content"]
    assert system.startswith("You are a Python code execution agent.")
    assert (
        "<variables>\n- name: flights\n  type: DataFrame\n"
        "  description: All flights that departed New York City (EWR, JFK, LGA) in 2013\n"
        "- name: fleet\n  type: FleetRegistry\n  description: The aircraft registry\n"
        "</variables>"
    ) in system
    assert "FleetRegistry:\n  doc: The registry of aircraft" in system
    assert "    - built_before(year: int) -> DataFrame" in system
    # No live namespace: upstream lists injected items only, never in the user turn.
    assert "Namespace" not in model.requests[0][-1]["content"]
    later = model.requests[-1]
    assert "old_planes" not in later[0]["content"]
    assert later[0] == model.requests[0][0]  # the system prompt stays the same


async def test_upstream_style_agent_renders_functions_with_their_doc():
    task = select("united_km")[0]
    runtime = make_runtime(task)
    agent = UpstreamStyleAgent(ScriptedModel([]), runtime)
    system = (await agent.build_request())[0]["content"]
    assert (
        "<functions>\n- function: miles_to_km(miles: float) -> float\n  doc:\n"
        "    Convert a distance in miles to kilometres.\n</functions>"
    ) in system
    assert isinstance(runtime.injected["miles_to_km"], Function)
    # The frames' class is injected automatically (as upstream does), never as a schema.
    types = [i for i in runtime.injected.values() if isinstance(i, Type)]
    assert all(t.automatic and not t.include_schema for t in types)
    await runtime.stop()


# -- summaries -----------------------------------------------------------------------------------


def _run(task, prompt, ok, tokens, wall=10.0):
    return TaskRun(task, "frame", prompt, success=ok, prompt_tokens=tokens, wall_s=wall)


def test_summary_and_token_ratio():
    runs = [
        _run("a", "cave", True, 400),
        _run("b", "cave", True, 600),
        _run("c", "cave", False, 2000),
        _run("a", "upstream", True, 1000),
        _run("b", "upstream", False, 1000),
        _run("c", "upstream", False, 3000),
    ]
    totals = summarize(runs)
    assert totals["cave"]["solved"] == 2 and totals["cave"]["success_rate"] == 0.667
    assert totals["cave"]["mean_prompt_tokens_solved"] == 500.0
    assert totals["upstream"]["mean_prompt_tokens"] == 1666.7
    ratio = token_ratio(runs)
    assert ratio["pairs"] == 2 and ratio["ratio"] == 0.5
    assert ratio["both_solved"] == 1 and ratio["ratio_both_solved"] == 0.4
    rows, figures = report_rows(runs)
    by_metric = {r["metric"]: r for r in rows}
    assert by_metric["cave/upstream prompt tokens, tasks cave solved"]["ok"] is True
    assert by_metric["cave: tasks solved (of 3)"]["value"] == 2
    assert figures["comparison"]["ratio"] == 0.5
    # Held-out tasks are totalled and compared apart from the suite.
    held = [_run("ho_x", "cave", True, 300), _run("ho_x", "upstream", True, 600)]
    totals = summarize(runs + held)
    assert totals["cave"]["runs"] == 3 and totals["cave held-out"]["solved"] == 1
    _, figures = report_rows(runs + held)
    assert figures["comparison"]["ratio"] == 0.5
    assert figures["comparison"]["held-out"]["ratio"] == 0.5


def test_merge_reports_arms_run_one_after_the_other(tmp_path, monkeypatch, capsys):
    import _common
    import agent_eval

    for module in (agent_eval, _common):
        monkeypatch.setattr(module, "RESULTS", tmp_path)
    cave = [_run("a", "cave", True, 400).to_dict(), _run("b", "cave", False, 900).to_dict()]
    upstream = [_run("a", "upstream", True, 1000).to_dict()]
    paths = []
    for label, runs in (("c", cave), ("u", upstream)):
        path = tmp_path / f"{label}.json"
        path.write_text(json.dumps({"runs": runs}))
        paths.append(str(path))
    assert agent_eval_main(["--merge", *paths, "--label", "both"]) == 0
    saved = json.loads((tmp_path / "agent_eval_both.json").read_text())
    assert saved["comparison"]["ratio"] == 0.4 and len(saved["runs"]) == 3
    assert "upstream" in capsys.readouterr().out
