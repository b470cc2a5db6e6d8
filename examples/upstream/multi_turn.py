"""Multi-turn: later questions build on what earlier turns left in the runtime.

Port of upstream CaveAgent's `examples/multi_turn.py` (same scenario; only the import
differs). The model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os

from cave_tui import CaveAgent
from cave_tui.models import OpenAIServerModel
from cave_tui.runtime import IPythonRuntime, Type, Variable

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)


class DataAnalyzer:
    """Descriptive statistics of a list of numbers: min, max, mean and count.

    >>> DataAnalyzer().analyze([1, 2, 3])
    {'min': 1, 'max': 3, 'avg': 2.0, 'len': 3}
    """

    def analyze(self, data: list) -> dict:
        """Return min, max, avg (the mean) and len of data."""
        return {
            "min": min(data),
            "max": max(data),
            "avg": sum(data) / len(data),
            "len": len(data),
        }


async def main():
    runtime = IPythonRuntime(
        variables=[
            Variable(
                "analyzer",
                DataAnalyzer(),
                "Statistics tool\nusage: stats = analyzer.analyze(numbers)",
            ),
            Variable("numbers", [3, 1, 4, 1, 5, 9, 2, 6, 5], "The data to analyse"),
            Variable("stats", description="Put the analysis here"),
        ],
        types=[Type(DataAnalyzer)],
    )
    agent = CaveAgent(model, runtime=runtime, display=True)

    print("Starting the analysis...")
    await agent.run("Analyze the numbers and store the results in 'stats'")
    print("\nBasic stats:", await agent.runtime.retrieve("stats"))

    response = await agent.run("What is the average value in the stats?")
    print("\nAverage value:", response.content)

    response = await agent.run("Is the maximum value (9) significantly higher than the average?")
    print("\nInterpretation:", response.content)


if __name__ == "__main__":
    asyncio.run(main())
