"""A runtime that raises `RuntimeExecutionError` from `execute` (it cannot run cells: 0.8's
"a broken kernel is not a broken answer") ends the run as `RUNTIME_ERROR`, with its
StoppedEvent, and the cell's code is still paired with a result in the history. A cell
whose own code raises stays an observation the model reads."""

from __future__ import annotations

from cave_tui import CaveAgent, RuntimeExecutionError
from cave_tui.agent.response import AgentStatus
from cave_tui.events import StoppedEvent, StopReason
from cave_tui.messages import CodeExecutionMessage, ExecutionResultMessage
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime


class DeadRuntime(IPythonRuntime):
    async def execute(self, code: str) -> object:  # type: ignore[override]
        raise RuntimeExecutionError("kernel died")


async def test_a_runtime_failure_ends_the_run_as_runtime_error() -> None:
    model = ScriptedModel(["```python\nprint(1)\n```", "never asked"])
    agent = CaveAgent(model, runtime=DeadRuntime(), display=False)

    events = [e async for e in agent.stream_events("go")]

    assert isinstance(events[-1], StoppedEvent)
    assert events[-1].stop_reason is StopReason.RUNTIME_ERROR and events[-1].steps == 1
    messages = agent.messages
    code_at = next(i for i, m in enumerate(messages) if isinstance(m, CodeExecutionMessage))
    assert isinstance(messages[code_at + 1], ExecutionResultMessage)
    assert "kernel died" in messages[code_at + 1].content

    response = await CaveAgent(
        ScriptedModel(["```python\nprint(1)\n```"]), runtime=DeadRuntime(), display=False
    ).run("go")
    assert response.stop_reason is StopReason.RUNTIME_ERROR
    assert response.status is AgentStatus.ERROR  # 0.7's view of the same end
    assert response.error is not None and "kernel died" in response.error


async def test_code_that_raises_is_still_an_observation() -> None:
    model = ScriptedModel(["```python\nraise ValueError('nope')\n```", "Handled."])
    response = await CaveAgent(model, runtime=IPythonRuntime(), display=False).run("go")

    assert response.stop_reason is StopReason.COMPLETED
    assert response.content == "Handled."
