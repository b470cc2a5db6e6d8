"""Execution timeout, in process and in an isolated kernel.

Port of upstream CaveAgent's `examples/timeout_demo.py` (same scenario; only the import
differs). The agent is asked to call a function that takes longer than
`max_exec_timeout`: the cell is stopped and the model is told it timed out. The model
comes from LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL (no default endpoint or key).
"""

import asyncio
import os
import time

from rich.console import Console
from rich.rule import Rule

from cave_tui import CaveAgent, Function, IPythonRuntime
from cave_tui.display import render_user_prompt
from cave_tui.models.openai import OpenAIServerModel
from cave_tui.runtime import IPyKernelRuntime

console = Console()

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)


def slow_compute(n: int) -> str:
    """Pretend to compute for n seconds, then say so."""
    time.sleep(n)
    return f"Computed after {n}s"


query = "Call slow_compute(10) — it takes 10 seconds but we have a 5 second timeout."


async def main():
    console.print(Rule("[bold]IPythonRuntime (in process)[/]", style="dim"))
    agent = CaveAgent(
        model=model,
        runtime=IPythonRuntime(functions=[Function(slow_compute)]),
        max_exec_timeout=5,
        max_steps=3,
    )
    render_user_prompt(query)
    async for _event in agent.stream_events(query):
        pass

    console.print(Rule("[bold]IPyKernelRuntime (separate process)[/]", style="dim"))
    async with IPyKernelRuntime(functions=[Function(slow_compute)]) as runtime:
        agent = CaveAgent(model=model, runtime=runtime, max_exec_timeout=5, max_steps=3)
        render_user_prompt(query)
        async for _event in agent.stream_events(query):
            pass


if __name__ == "__main__":
    asyncio.run(main())
