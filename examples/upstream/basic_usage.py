"""Basic usage: functions as tools, injected objects, and streamed events.

Port of upstream CaveAgent's `examples/basic_usage.py` (same scenario; only the import
differs). The model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.

Usage:
    python examples/upstream/basic_usage.py
"""

import asyncio
import os

from cave_tui import CaveAgent
from cave_tui.models import LiteLLMModel
from cave_tui.runtime import Function, IPythonRuntime, Type, Variable

model = LiteLLMModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
    custom_llm_provider="openai",
)


def add(a: int, b: int) -> int:
    """Return the sum of a and b."""
    return a + b


def multiply(a: int, b: int) -> int:
    """Return the product of a and b."""
    return a * b


def calculate_sum(a: int, b: int) -> int:
    """Return the sum of a and b, saying what it adds."""
    print(f"Adding {a} and {b}")
    return a + b


class DataProcessor:
    """Sorts lists of numbers."""

    def process(self, data: list) -> list:
        """Return the numbers of data in ascending order."""
        return sorted(data)


async def main():
    print("=== 1. Calculations with injected functions ===")
    calculator = CaveAgent(
        model, runtime=IPythonRuntime(functions=[Function(add), Function(multiply)])
    )
    for question in ["Calculate 5 plus 3", "What is 4 times 6?"]:
        response = await calculator.run(question)
        print("Result:", response.content)

    print("\n=== 2. Working on injected objects ===")
    runtime = IPythonRuntime(
        functions=[Function(calculate_sum)],
        variables=[
            Variable(
                name="processor",
                value=DataProcessor(),
                description="Sorts numbers\nusage: result = processor.process([3, 1, 4])",
            ),
            Variable(
                name="numbers",
                value=[3, 1, 4, 1, 5, 9],
                description="The numbers to process\nusage: print(numbers)",
            ),
            Variable(
                name="result",
                description="Where the processed numbers go\nusage: print(result)",
            ),
        ],
        types=[Type(DataProcessor)],
    )
    sorter = CaveAgent(model, runtime=runtime)
    response = await sorter.run(
        "Use processor to sort the numbers and store the result in the 'result' variable"
    )
    print("Response:", response)
    print("Sorted result:", await sorter.runtime.retrieve("result"))  # [1, 1, 3, 4, 5, 9]

    print("\n=== 3. Streaming events ===")
    streamer = CaveAgent(
        model, runtime=IPythonRuntime(functions=[Function(add), Function(multiply)])
    )
    async for event in streamer.stream_events(
        "Calculate 10 plus 20, then multiply the result by 3"
    ):
        print(f"[{event.type.value}] {event.content}")


if __name__ == "__main__":
    asyncio.run(main())
