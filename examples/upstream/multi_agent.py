"""Multi-agent pipeline (supervisor pattern): an orchestrator drives two sub-agents.

Port of upstream CaveAgent's `examples/multi_agent.py` (same scenario; only the import
differs). The orchestrator holds the cleaner and the analyzer as runtime variables: it
hands each its input with `update_variable`, runs it with `await agent.run(...)` and
reads its output with `retrieve`. The model comes from LLM_MODEL_ID, LLM_API_KEY and
LLM_BASE_URL.
"""

import asyncio
import os

from rich.console import Console
from rich.panel import Panel
from rich.rule import Rule
from rich.table import Table
from rich.text import Text

from cave_tui import CaveAgent
from cave_tui.models.openai import OpenAIServerModel
from cave_tui.runtime import IPythonRuntime, Variable

console = Console()

model = OpenAIServerModel(
    model_id=os.getenv("LLM_MODEL_ID"),
    api_key=os.getenv("LLM_API_KEY"),
    base_url=os.getenv("LLM_BASE_URL"),
)

RAW_DATA = [
    {"name": "Alice", "age": 30, "dept": "Engineering", "salary": 50000, "rating": 4.2},
    {"name": "Bob", "age": None, "dept": "Marketing", "salary": 60000, "rating": 3.8},
    {"name": "Charlie", "age": 25, "dept": "Engineering", "salary": None, "rating": 4.5},
    {"name": "Diana", "age": 35, "dept": "Sales", "salary": 70000, "rating": None},
    {"name": "Eve", "age": None, "dept": None, "salary": None, "rating": 3.1},
    {"name": "Frank", "age": 28, "dept": "Engineering", "salary": 55000, "rating": 4.0},
    {"name": "Grace", "age": 32, "dept": "Marketing", "salary": None, "rating": 4.7},
    {"name": "Henry", "age": None, "dept": "Sales", "salary": 48000, "rating": 3.5},
    {"name": "Ivy", "age": 27, "dept": "Engineering", "salary": 62000, "rating": 4.3},
]
COLUMNS = ["name", "age", "dept", "salary", "rating"]
RECORDS = "list of dicts with keys 'name', 'age', 'dept', 'salary', 'rating'"


def cell(value) -> Text | str:
    """A table cell: None in red, thousands separated, ratings to one decimal."""
    if value is None:
        return Text("None", style="red")
    if isinstance(value, float):
        return f"{value:.1f}"
    if isinstance(value, int):
        return f"{value:,}"
    return str(value)


def records_table(records: list[dict], title: str) -> Table:
    table = Table(title=title, header_style="bold", box=None, padding=(0, 1))
    for column in COLUMNS:
        table.add_column(column.title(), justify="left" if column in ("name", "dept") else "right")
    for record in records:
        table.add_row(*(cell(record.get(column)) for column in COLUMNS))
    return table


async def main():
    cleaner = CaveAgent(
        model,
        runtime=IPythonRuntime(
            variables=[
                Variable("data", [], f"Input: {RECORDS}"),
                Variable("cleaned_data", [], "Output: the records without any None value"),
            ]
        ),
        display=False,
    )
    analyzer = CaveAgent(
        model,
        runtime=IPythonRuntime(
            variables=[
                Variable("data", [], f"Input: {RECORDS}"),
                Variable("insights", {}, "Output: dict of statistics"),
            ]
        ),
        display=False,
    )

    def how_to_use(name: str, output: str) -> str:
        return (
            f"{name.title()} agent: {name}.runtime.update_variable('data', value) sets its "
            f"input, await {name}.run('instruction') runs it, "
            f"await {name}.runtime.retrieve('{output}') reads its output"
        )

    orchestrator = CaveAgent(
        model,
        runtime=IPythonRuntime(
            variables=[
                Variable("raw_data", RAW_DATA, "Raw dataset with missing (None) values"),
                Variable("cleaner", cleaner, how_to_use("cleaner", "cleaned_data")),
                Variable("analyzer", analyzer, how_to_use("analyzer", "insights")),
                Variable("cleaned_data", [], "Cleaned data from the cleaner agent"),
                Variable("insights", {}, "Insights from the analyzer agent"),
            ]
        ),
        instructions="You are a supervisor agent: you coordinate the cleaner and analyzer agents.",
        max_steps=20,
        max_exec_output=50000,
    )

    console.print(Rule("[bold cyan]Multi-Agent Pipeline[/]"))
    console.print(Panel(records_table(RAW_DATA, "Raw data"), border_style="dim"))
    console.print(Rule("[bold cyan]Running the pipeline[/]"))

    await orchestrator.run("Clean the raw_data using cleaner, then analyze it using analyzer")

    cleaned = await orchestrator.runtime.retrieve("cleaned_data")
    insights = await orchestrator.runtime.retrieve("insights")

    console.print(Rule("[bold green]Results[/]"))
    console.print(records_table(cleaned, "Cleaned data"))
    if insights:
        table = Table(title="Insights", header_style="bold", border_style="green")
        table.add_column("Metric", style="bold")
        table.add_column("Value", justify="right")
        for key, value in insights.items():
            shown = f"{value:,.1f}" if isinstance(value, float) else str(value)
            table.add_row(key.replace("_", " ").title(), shown)
        console.print(table)
    removed = len(RAW_DATA) - len(cleaned)
    console.print(f"{len(RAW_DATA)} raw → {len(cleaned)} cleaned ({removed} removed)")


if __name__ == "__main__":
    asyncio.run(main())
