"""Streaming: show each event of a run as it happens, styled with Rich.

Port of upstream CaveAgent's `examples/stream.py` (same scenario; only the import
differs). Upstream's file imports `LogLevel` and `Logger` from the package root, which
upstream does not export, and passes `log_level=` to `CaveAgent`, which it does not
take; this port prints with Rich directly. The model comes from LLM_MODEL_ID,
LLM_API_KEY and LLM_BASE_URL.
"""

import asyncio
import os

from rich.console import Console
from rich.panel import Panel
from rich.syntax import Syntax
from rich.text import Text

from cave_tui import CaveAgent
from cave_tui.models import OpenAIServerModel
from cave_tui.runtime import IPythonRuntime, Type, Variable

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)

console = Console()


class DataProcessor:
    """Sorts lists of numbers."""

    def process(self, data: list) -> list:
        """Return the numbers of data in ascending order."""
        return sorted(data)


async def main():
    runtime = IPythonRuntime(
        variables=[
            Variable(
                "processor",
                DataProcessor(),
                "Sorts numbers\nusage: result = processor.process([3, 1, 4])",
            ),
            Variable("numbers", [3, 1, 4, 1, 5, 9], "The numbers to process"),
            Variable("result", description="Where the processed numbers go"),
        ],
        types=[Type(DataProcessor)],
    )
    agent = CaveAgent(model, runtime=runtime, display=False)

    prompt = "Use processor to sort the numbers"
    console.print(Text(f"User: {prompt}", style="yellow"))

    async for event in agent.stream_events(prompt):
        kind = event.type.name
        if kind == "TEXT":
            console.print(Text(event.content, style="cyan"), end="")
        elif kind == "CODE":
            console.print(Panel(Syntax(event.content, "python"), title="Executing code"))
        elif kind == "EXECUTION_OUTPUT":
            console.print(Panel(event.content, title="Execution output", style="yellow"))
        elif kind == "EXECUTION_ERROR":
            console.print(Panel(event.content, title="Execution error", style="red"))
        elif kind == "FINAL_RESPONSE":
            console.print(Panel(event.content, title="Final response", style="green"))

    state = {name: await agent.runtime.retrieve(name) for name in ("numbers", "result")}
    console.print(Text(f"\nRuntime state: {state}", style="yellow"))


if __name__ == "__main__":
    asyncio.run(main())
