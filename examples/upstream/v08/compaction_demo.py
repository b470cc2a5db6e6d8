"""Compaction during a long run, drawn by 0.8's renderer (upstream CaveAgent 0.8).

Port of upstream 0.8's `examples/compaction_demo.py` (same scenario, written for this
package): a 3,000-token window fills after a few turns of analysis, and the agent
compacts its conversation while the runs go on; each run is drawn by `render_run`. The
model comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os

from cave_tui import CaveAgent
from cave_tui.models import OpenAIModel
from cave_tui.renderers import render_run
from cave_tui.runtime import Function, IPythonRuntime, Variable

model = OpenAIModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)


def analyze(data: list) -> dict:
    """Count, sum, mean, min and max of a list of numbers."""
    return {
        "count": len(data),
        "sum": sum(data),
        "mean": sum(data) / len(data) if data else 0,
        "min": min(data) if data else None,
        "max": max(data) if data else None,
    }


async def main() -> None:
    runtime = IPythonRuntime(
        functions=[Function(analyze)],
        variables=[
            Variable(
                "sales",
                [120, 340, 250, 890, 670, 430, 510, 780, 360, 290, 150, 920],
                "Monthly sales data for the year",
            ),
            Variable("report", description="Store the final analysis report here"),
        ],
    )
    agent = CaveAgent(model, runtime=runtime, context_window=3_000)  # compacts within a few runs
    for question in (
        "Analyze the sales data using the analyze function",
        "Find which months had above-average sales",
        "Calculate the total revenue and the quarter-by-quarter breakdown",
        "What's the month-over-month growth rate?",
        "Summarize everything into a report variable",
    ):
        await render_run(agent, question)
    print("\n=== Final report ===")
    print(await runtime.retrieve("report"))


if __name__ == "__main__":
    asyncio.run(main())
