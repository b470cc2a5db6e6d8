"""Object methods: the agent calls the methods of an injected object.

Port of upstream CaveAgent's `examples/object_methods.py` (same scenario; only the
import differs). The model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os
from dataclasses import dataclass

from cave_tui import CaveAgent
from cave_tui.models import OpenAIServerModel
from cave_tui.runtime import IPythonRuntime, Variable

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)


@dataclass
class DataProcessor:
    """Cleans and filters lists of numbers.

    >>> DataProcessor().process_list([3, 1, 3])
    [1, 3]
    >>> DataProcessor().filter_numbers([1, 5, 8], 4)
    [5, 8]
    """

    def process_list(self, data: list) -> list:
        """Return the distinct values of data, in ascending order."""
        return sorted(set(data))

    def filter_numbers(self, data: list, threshold: int) -> list:
        """Return the values of data greater than threshold."""
        return [x for x in data if x > threshold]


async def main():
    runtime = IPythonRuntime(
        variables=[
            Variable(
                "processor",
                DataProcessor(),
                "Processing methods\nusage: processed_data = processor.process_list(numbers)",
            ),
            Variable("numbers", [3, 1, 4, 1, 5, 9, 2, 6, 5], "The input numbers"),
            Variable("processed_data", description="Put the processed numbers here"),
            Variable(
                "filtered_data",
                description="Put the filtered numbers here\n"
                "usage: filtered_data = processor.filter_numbers(numbers, 5)",
            ),
        ]
    )
    agent = CaveAgent(model, runtime=runtime)

    await agent.run("Use processor to sort and deduplicate numbers")
    print("Processed data:", await agent.runtime.retrieve("processed_data"))

    await agent.run("Filter numbers greater than 4")
    print("Filtered data:", await agent.runtime.retrieve("filtered_data"))


if __name__ == "__main__":
    asyncio.run(main())
