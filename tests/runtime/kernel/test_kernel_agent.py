"""CaveAgent on the kernel runtime, end to end with a scripted model."""

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Function, Variable
from cave_tui.runtime.kernel import IPyKernelRuntime


def double(x: int) -> int:
    """Return x doubled."""
    return x * 2


async def test_agent_runs_on_the_kernel_runtime():
    runtime = IPyKernelRuntime(
        variables=[Variable("numbers", [5, 3, 8, 1], "numbers to transform")],
        functions=[Function(double)],
    )
    model = ScriptedModel(
        [
            "First a look.\n```python\nprint(numbers)\n```",
            "```python\nresult = sorted(double(n) for n in numbers)\n```",
            "Done: `result` holds the doubled numbers in order.",
        ]
    )
    async with runtime:
        agent = CaveAgent(model, runtime=runtime)
        response = await agent.run("Double the numbers, sorted, into result")
        assert response.status is AgentStatus.COMPLETED and response.steps == 3
        assert await runtime.retrieve("result") == [2, 6, 10, 16]
        first = model.requests[0][-1]["content"]
        assert "double(x: int) -> int" in first and "Return x doubled." in first
        assert "numbers: list len 4 = [5, 3, 8, 1]" in first
        assert "[5, 3, 8, 1]" in model.requests[1][-1]["content"]
        assert "result: list len 4 = [2, 6, 10, 16]" in model.requests[2][-1]["content"]


async def test_agent_sees_a_kernel_crash_and_carries_on():
    runtime = IPyKernelRuntime(variables=[Variable("numbers", [1, 2, 3])])
    model = ScriptedModel(
        [
            "```python\ntotal = sum(numbers)\n```",
            "```python\nimport ctypes\nctypes.string_at(0)\n```",
            "```python\nprint(total * 10)\n```",
            "The total times ten is 60.",
        ]
    )
    async with runtime:
        agent = CaveAgent(model, runtime=runtime)
        response = await agent.run("go")
        assert response.status is AgentStatus.COMPLETED
        crash_observation = model.requests[2][-1]["content"]
        assert "segmentation fault" in crash_observation
        assert "Restored from the last checkpoint: total" in crash_observation
        assert "60" in model.requests[3][-1]["content"]


async def test_final_answer_ends_the_turn_on_the_kernel_runtime():
    """The answer travels through the kernel's captured output, like any print."""
    runtime = IPyKernelRuntime(variables=[Variable("numbers", [5, 3, 8, 1])])
    model = ScriptedModel(
        [
            "```python\ntotal = sum(numbers)\nprint('summing')\n"
            "final_answer(f'total is {total}')\n```"
        ]
    )
    async with runtime:
        agent = CaveAgent(model, runtime=runtime)
        response = await agent.run("Sum the numbers into total")
        assert response.status is AgentStatus.COMPLETED and response.steps == 1
        assert response.content == "total is 17"
        assert agent.history[2]["content"] == "Output:\nsumming\n[changed: total]"
        assert "final_answer" not in await agent.namespace_text()
