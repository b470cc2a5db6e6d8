"""Issue 32.4: one way to run a cell (`cells.run_cell(author=...)`) and one converter of its
result to an event, for the agent's cells, the user's `!` cells and replayed user cells."""

from __future__ import annotations

import pytest

from cave_tui.agent import events as ev
from cave_tui.agent.cells import CellAuthor, cell_event, run_cell
from cave_tui.app.runtime_choice import make_checker
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.ipython import IPythonRuntime

SUBPROCESS = "import subprocess\nprint(subprocess.run(['true']).returncode)"  # standard refuses


@pytest.fixture(scope="module")
def runtime():
    return IPythonRuntime(security_checker=make_checker("standard"))


async def _run(runtime, code, author):
    items = [item async for item in run_cell(runtime, code, author=author)]
    assert isinstance(items[-1], ExecutionResult)  # the result comes last
    return items[:-1], items[-1]


async def test_the_agents_cell_is_checked_the_users_and_the_replays_are_not(runtime):
    _, agent = await _run(runtime, SUBPROCESS, CellAuthor.AGENT)
    assert agent.blocked and not agent.success
    assert isinstance(cell_event(agent, author=CellAuthor.AGENT), ev.SecurityErrorEvent)
    for author in (CellAuthor.USER, CellAuthor.REPLAY):
        _, result = await _run(runtime, SUBPROCESS, author)
        assert result.success and result.output == "0\n"


async def test_output_events_and_the_outcome_are_tagged_by_author(runtime):
    events, result = await _run(runtime, "print('hi')\nq = 7", CellAuthor.USER)
    assert "".join(e.content for e in events) == "hi\n"  # streamed: chunks as they came
    assert all(isinstance(e, ev.OutputEvent) and e.agent == ev.USER_AGENT for e in events)
    user = cell_event(result, author=CellAuthor.USER)
    assert isinstance(user, ev.ExecutionOutputEvent)
    assert (user.agent, user.content, user.changed) == (ev.USER_AGENT, "hi\n", ["q"])
    agent = cell_event(result, author=CellAuthor.AGENT, observation="seen", step=3)
    assert (agent.agent, agent.step, agent.observation) == (None, 3, "seen")


async def test_an_error_is_shown_as_the_user_sees_it_and_as_the_model_reads_it(runtime):
    _, result = await _run(runtime, "print('so far')\n1 / 0", CellAuthor.USER)
    user = cell_event(result, author=CellAuthor.USER)
    assert isinstance(user, ev.ExecutionErrorEvent) and user.error_type == "ZeroDivisionError"
    assert user.content == result.error_text and user.output == "so far\n"
    agent = cell_event(result, author=CellAuthor.AGENT, delivered="!")
    assert agent.content == (result.stdout or "") + "!"
