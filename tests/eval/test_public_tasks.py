"""The public-data task sets (bench/eval_public.py, bench/eval_closed_form*.py): each reference
solution solves its task through the real agent loop; a closed-form answer is checked on the
answer's text."""

from __future__ import annotations

import pytest
from agent_eval import run_task
from eval_closed_form import CLOSED_FORM_HOLDOUT_TASKS, CLOSED_FORM_TASKS
from eval_closed_form_fresh import CLOSED_FORM_FRESH_TASKS
from eval_closed_form_mixed import CLOSED_FORM_MIXED_TASKS, MISSING_VALUES, UNNAMED_COLUMNS
from eval_closed_form_mixed import table as mixed_table
from eval_closed_form_wide import CLOSED_FORM_WIDE_TASKS, NEEDED_COLUMNS
from eval_closed_form_wide import table as wide_table
from eval_public import ANSWER, PUBLIC_HOLDOUT_TASKS, PUBLIC_TASKS, AnswerFormat
from eval_tasks import select

from cave_tui.models import ScriptedModel

CLOSED_FORM = [
    *CLOSED_FORM_TASKS,
    *CLOSED_FORM_HOLDOUT_TASKS,
    *CLOSED_FORM_FRESH_TASKS,
    *CLOSED_FORM_WIDE_TASKS,
    *CLOSED_FORM_MIXED_TASKS,
]
ALL = [*PUBLIC_TASKS, *PUBLIC_HOLDOUT_TASKS, *CLOSED_FORM]


def _script(task) -> list[str]:
    replies: list[str] = []
    for code in task.solution:
        replies.append(f"```python\n{code}\n```")
        if "final_answer(" not in code:
            replies.append("Done.")
    return replies


@pytest.mark.parametrize("task", ALL, ids=[t.name for t in ALL])
async def test_reference_solution_solves_the_public_task(task):
    run = await run_task(task, ScriptedModel(_script(task)), "cave", max_steps=4, time_cap=60)
    assert run.success, run.checks
    assert run.statuses == ["completed"] * len(task.turns)


async def test_a_closed_form_answer_in_another_format_or_value_fails():
    task = select("pb_csv_big_engines")[0]
    wrong = ["The answer is 42.", "@count[41]", "@count[many]"]
    for text in wrong:
        run = await run_task(task, ScriptedModel([text]), "cave", max_steps=2, time_cap=30)
        assert not run.success and run.checks[ANSWER] != "ok", text


def test_answer_format_rounds_to_the_asked_decimals():
    check = AnswerFormat("corr", 0.123, 3).check
    assert check("so @corr[0.123]").ok and check("@corr[0.1234]").ok
    assert not check("@corr[0.125]").ok and not check("corr = 0.123").ok


def test_the_public_sets_are_apart_and_selected_by_name():
    assert {t.name for t in select("public")} == {t.name for t in PUBLIC_TASKS}
    assert {t.name for t in select("public_holdout")} == {t.name for t in PUBLIC_HOLDOUT_TASKS}
    assert not {t.name for t in PUBLIC_TASKS} & {t.name for t in PUBLIC_HOLDOUT_TASKS}
    assert {t.name for t in select("closed_form")} == {t.name for t in CLOSED_FORM_TASKS}
    held = {t.name for t in select("closed_form_holdout")}
    assert held == {t.name for t in CLOSED_FORM_HOLDOUT_TASKS}
    assert not held & {t.name for t in CLOSED_FORM_TASKS}
    fresh = {t.name for t in select("closed_form_fresh")}
    assert fresh == {t.name for t in CLOSED_FORM_FRESH_TASKS}
    assert not fresh & (held | {t.name for t in CLOSED_FORM_TASKS})
    wide = {t.name for t in select("closed_form_wide")}
    assert wide == {t.name for t in CLOSED_FORM_WIDE_TASKS} and len(wide) == 9
    assert not wide & (fresh | held | {t.name for t in CLOSED_FORM_TASKS})
    mixed = {t.name for t in select("closed_form_mixed")}
    assert mixed == {t.name for t in CLOSED_FORM_MIXED_TASKS} and len(mixed) == 10
    assert not mixed & (wide | fresh | held | {t.name for t in CLOSED_FORM_TASKS})
    assert not {t.name for t in select("")} & {t.name for t in ALL}


def test_the_wide_set_needs_columns_past_the_24th():
    assert set(NEEDED_COLUMNS) == {t.name for t in CLOSED_FORM_WIDE_TASKS}
    late = 0
    for name, columns in NEEDED_COLUMNS.values():
        header = list(wide_table(name).columns)
        assert len(header) >= 25 and set(columns) <= set(header), name
        late += max(header.index(c) + 1 for c in columns) > 24
    assert late == len(NEEDED_COLUMNS)


def test_the_mixed_set_is_on_data_no_other_part_uses_and_its_files_are_as_said():
    mixed = {t.name for t in CLOSED_FORM_MIXED_TASKS}
    assert all(name.startswith("cm_") for name in mixed)
    assert sum(len(t.truth({})) >= 2 for t in CLOSED_FORM_MIXED_TASKS) >= 3
    others = [t for t in ALL if t.name not in mixed]
    theirs = " ".join(turn for t in others for turn in t.turns)
    for task in CLOSED_FORM_MIXED_TASKS:
        (question,) = task.turns
        path = question.split(" ", 1)[0]  # each question opens with its CSV's path
        assert path.endswith(".csv") and path not in theirs, task.name
    for name, column in MISSING_VALUES.items():
        assert mixed_table(name)[column].isna().any(), name
    for task_name, (name, columns) in UNNAMED_COLUMNS.items():
        (question,) = next(t for t in CLOSED_FORM_MIXED_TASKS if t.name == task_name).turns
        assert set(columns) <= set(mixed_table(name).columns)
        assert not any(column in question for column in columns), task_name


async def test_every_answer_of_a_two_part_question_is_checked():
    task = select("cf_fair_occupation")[0]
    first, second = task.truth({}).values()
    half = f"@{first.name}[{first.expected:g}], @{second.name}[{second.expected + 1:.2f}]"
    run = await run_task(task, ScriptedModel([half]), "cave", max_steps=2, time_cap=30)
    assert not run.success
    assert run.checks[ANSWER] == "ok" and run.checks[f"{ANSWER}:2"] != "ok"
