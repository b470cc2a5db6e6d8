"""Context compaction: a small context window fills after a few turns and is compacted.

Port of upstream CaveAgent's `examples/compaction_demo.py` (same scenario; only the
import differs). With `display=True` the run shows when the conversation is compacted.
The model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os

from cave_tui import CaveAgent
from cave_tui.models import OpenAIServerModel
from cave_tui.runtime import Function, IPythonRuntime, Variable

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)


def analyze(data: list) -> dict:
    """Return count, sum, mean, min and max of a list of numbers."""
    if not data:
        return {"count": 0, "sum": 0, "mean": 0, "min": None, "max": None}
    return {
        "count": len(data),
        "sum": sum(data),
        "mean": sum(data) / len(data),
        "min": min(data),
        "max": max(data),
    }


QUESTIONS = [
    "Analyze the sales data using the analyze function",
    "Find which months had above-average sales",
    "Calculate the total revenue and the quarter-by-quarter breakdown",
    "What's the month-over-month growth rate?",
    "Summarize everything into a report variable",
]


async def main():
    runtime = IPythonRuntime(
        functions=[Function(analyze)],
        variables=[
            Variable(
                "sales",
                [120, 340, 250, 890, 670, 430, 510, 780, 360, 290, 150, 920],
                "Sales of each month of the year, January first",
            ),
            Variable("report", description="Put the final analysis report here"),
        ],
    )
    # A 3,000-token window: a few turns of code and output are enough to need compaction.
    agent = CaveAgent(model, runtime=runtime, context_window=3_000, display=True)

    for question in QUESTIONS:
        await agent.run(question)

    print("\n=== Final report ===")
    print(await runtime.retrieve("report"))


if __name__ == "__main__":
    asyncio.run(main())
