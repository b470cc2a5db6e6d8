"""A runtime written to upstream's interface (`execute(code, timeout)`) runs under the agent."""

from __future__ import annotations

from cave_tui.agent import CaveAgent
from cave_tui.models import ScriptedModel
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.ipython import IPythonRuntime


class OldStyleRuntime(IPythonRuntime):
    """Overrides execute() without the streaming keyword, as upstream code would."""

    async def execute(self, code: str, timeout: float | None = None) -> ExecutionResult:
        self.seen = code
        return await super().execute(code, timeout)


async def test_an_execute_without_on_output_still_runs():
    runtime = OldStyleRuntime()
    agent = CaveAgent(ScriptedModel(["```python\nanswer = 6 * 7\n```", "It is 42."]), runtime)
    response = await agent.run("six times seven?")
    assert response.content == "It is 42."
    assert runtime.seen == "answer = 6 * 7\n" or runtime.seen.startswith("answer = 6 * 7")
    assert await runtime.retrieve("answer") == 42
