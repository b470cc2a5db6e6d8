"""NotDone: a made-up answer right after a failure is not taken."""

from cave_tui.agent import CaveAgent
from cave_tui.models import ScriptedModel


async def test_an_echoed_answer_right_after_a_failure_is_not_taken(runtime):
    model = ScriptedModel(
        [
            "```python\nflights['nope']\n```",
            "```python\nfinal_answer('No file is needed: use `flights`.')\n```",
            "```python\nn = len(flights)\nfinal_answer(f'{n} flights')\n```",
        ]
    )
    response = await CaveAgent(model, runtime, policies="not_done").run("count")
    assert response.content == "3 flights" and response.steps == 3
    assert "task is not done" in model.requests[2][-1]["content"]
    # After a success a fixed-text answer is fine.
    ok = ScriptedModel(["```python\nx = 1\n```", "```python\nfinal_answer('x is set')\n```"])
    assert (await CaveAgent(ok, runtime, policies="not_done").run("set x")).content == "x is set"
