"""AlreadyRan: the same cell after it ran is not run again."""

from cave_tui.agent import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.policies.already_ran import ALREADY_RAN_NOTE
from cave_tui.models import ScriptedModel


async def test_the_same_cell_after_it_ran_is_not_run_again(runtime):
    cell = "```python\nn = len(flights)\n```"
    model = ScriptedModel([cell, cell, "There are 3 flights."])
    events = [
        e
        async for e in CaveAgent(model, runtime, policies="already_ran").stream_events(
            "How many flights?"
        )
    ]
    assert ALREADY_RAN_NOTE in model.requests[2][-1]["content"]
    assert sum(isinstance(e, ev.ExecutionOutputEvent) for e in events) == 1
