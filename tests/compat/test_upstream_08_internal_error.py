"""An exception from a runtime's `execute` that is not a runtime failure is a defect, as in
upstream 0.8: the stream ends with `StoppedEvent(INTERNAL_ERROR)` and the exception is
raised after it. cave's own runtime failures (a kernel that cannot start or died, a busy
runtime, the OS refusing a process) are still told to the model, and the run goes on."""

from __future__ import annotations

import pytest

from cave_tui import CaveAgent
from cave_tui.events import StoppedEvent, StopReason
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime
from cave_tui.runtime.kernel import KernelLaunchError


def _runtime_raising(error: Exception) -> IPythonRuntime:
    runtime = IPythonRuntime()

    async def explode(code: str) -> None:
        raise error

    runtime.execute = explode  # type: ignore[method-assign,assignment]
    return runtime


async def test_an_unexpected_exception_stops_the_run_then_propagates() -> None:
    agent = CaveAgent(
        ScriptedModel(["```python\nprint(1)\n```", "done"]),
        runtime=_runtime_raising(KeyError("internal")),
        display=False,
    )
    events = []
    with pytest.raises(KeyError):
        async for event in agent.stream_events("q"):
            events.append(event)
    assert isinstance(events[-1], StoppedEvent)
    assert events[-1].stop_reason is StopReason.INTERNAL_ERROR


@pytest.mark.parametrize(
    "error", [KernelLaunchError("the kernel could not start"), OSError("no more processes")]
)
async def test_a_runtime_failure_is_told_to_the_model(error: Exception) -> None:
    model = ScriptedModel(["```python\nprint(1)\n```", "the kernel is down"])
    agent = CaveAgent(model, runtime=_runtime_raising(error), display=False)

    response = await agent.run("q")

    assert response.stop_reason is StopReason.COMPLETED
    assert str(error) in model.requests[1][-1]["content"]
