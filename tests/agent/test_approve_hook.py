"""The optional `approve` gate: run, edit or skip each code block before it executes."""

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.agent.core import SKIPPED_NOTE
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime


async def test_skip_does_not_run_and_tells_the_model():
    seen: list[str] = []

    async def approve(code: str) -> str | None:
        seen.append(code)
        return None

    runtime = IPythonRuntime()
    model = ScriptedModel(["```python\nx = 1\n```", "Skipped, fine."])
    agent = CaveAgent(model, runtime, approve=approve)
    events = [e async for e in agent.stream_events("set x")]
    assert seen == ["x = 1"]
    assert "x" not in await runtime.names()
    types = [e.type for e in events]
    assert EventType.EXECUTION_OUTPUT not in types
    assert EventType.NOTICE in types and types[-2:] == [EventType.FINAL_RESPONSE, EventType.STOPPED]
    assert SKIPPED_NOTE in model.requests[1][-1]["content"]


async def test_edit_runs_the_edited_code_and_says_so():
    async def approve(code: str) -> str | None:
        return code.replace("1", "41")

    runtime = IPythonRuntime()
    model = ScriptedModel(["```python\nx = 1\n```", "Done."])
    agent = CaveAgent(model, runtime, approve=approve)
    events = [e async for e in agent.stream_events("set x")]
    assert await runtime.retrieve("x") == 41
    codes = [e.code for e in events if e.type is EventType.CODE]
    assert codes == ["x = 1", "x = 41"]  # the model's, then what really ran
    assert "x = 41" in model.requests[1][-1]["content"]


async def test_unchanged_approval_runs_as_usual():
    async def approve(code: str) -> str | None:
        return code

    runtime = IPythonRuntime()
    agent = CaveAgent(ScriptedModel(["```python\ny = 2\n```", "ok"]), runtime, approve=approve)
    response = await agent.run("go")
    assert response.status is AgentStatus.COMPLETED
    assert await runtime.retrieve("y") == 2
