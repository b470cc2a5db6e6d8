"""Runtime state: results the agent stores are read back by the host between turns.

Port of upstream CaveAgent's `examples/runtime_state.py` (same scenario; only the
import differs). The model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os

from cave_tui import CaveAgent
from cave_tui.models import OpenAIServerModel
from cave_tui.runtime import IPythonRuntime, Variable

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)


async def main():
    runtime = IPythonRuntime(
        variables=[
            Variable("numbers", [3, 1, 4, 1, 5, 9, 2, 6, 5], "Numbers to work on"),
            Variable(
                "sorted_numbers",
                description="Put the sorted numbers here\nusage: sorted_numbers = sorted(numbers)",
            ),
            Variable(
                "sum_result",
                description="Put the sum of the numbers here\nusage: sum_result = sum(numbers)",
            ),
        ]
    )
    agent = CaveAgent(model, runtime=runtime)

    await agent.run("Sort the numbers list")
    print("Sorted numbers:", await runtime.retrieve("sorted_numbers"))

    await agent.run("Calculate the sum of all numbers")
    print("Sum:", await runtime.retrieve("sum_result"))


if __name__ == "__main__":
    asyncio.run(main())
