"""A cell's code is the code as written between the fences, without the newline
before the closing fence: `CodeEvent.code` and `AgentResponse.code_snippets` give it
as 0.8 (and 0.7's parser) did, and it runs the same."""

from __future__ import annotations

from cave_tui import CaveAgent
from cave_tui.events import CodeEvent, StopReason
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime


async def test_code_event_and_snippets_hold_the_code_as_written() -> None:
    runtime = IPythonRuntime()
    model = ScriptedModel(
        ["Two steps.\n```python\nx = 20\nprint(x)\n```", "```python\ny = x + 1\n```", "Done."]
    )
    agent = CaveAgent(model, runtime=runtime, display=False)

    events = [e async for e in agent.stream_events("go")]
    response = await CaveAgent(
        ScriptedModel(["```python\nz = 1\n```", "Done."]), runtime=IPythonRuntime(), display=False
    ).run("go")

    assert [e.code for e in events if isinstance(e, CodeEvent)] == ["x = 20\nprint(x)", "y = x + 1"]
    assert [e.content for e in events if isinstance(e, CodeEvent)] == [
        "x = 20\nprint(x)",
        "y = x + 1",
    ]
    assert await runtime.get_from_namespace("y") == 21
    assert response.stop_reason is StopReason.COMPLETED
    assert response.code_snippets == ["z = 1"]


async def test_unfenced_code_is_taken_without_a_trailing_newline() -> None:
    response = await CaveAgent(
        ScriptedModel(["w = 6 * 7", "Done."]), runtime=IPythonRuntime(), display=False
    ).run("go")

    assert response.code_snippets == ["w = 6 * 7"]
