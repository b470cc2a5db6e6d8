"""Multi-agent: an orchestrator drives a cleaner and an analyzer from its own code.

Upstream CaveAgent's example, ported. The sub-agents are ordinary objects in the
orchestrator's namespace (`Variable("cleaner", cleaner_agent)`); the orchestrator's
generated code calls `await cleaner.run(task)` (or `analyzer.run_sync(task)`),
moves data with `runtime.update_variable(...)` / `await runtime.retrieve(...)`,
and every runtime keeps its own namespace. The sub-agents' events appear in the
orchestrator's stream as they happen, tagged `[cleaner]` / `[analyzer]`.

    python examples/multi_agent.py            # scripted replies, live code
    CAVE_MODEL=... python examples/multi_agent.py
"""

from __future__ import annotations

import asyncio

from _common import pick_model, show

from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime, Variable

RAW_DATA = [
    {"name": "Alice", "age": 30, "salary": 50000},
    {"name": "Bob", "age": None, "salary": 60000},
    {"name": "Charlie", "age": 25, "salary": None},
    {"name": "Diana", "age": 35, "salary": 70000},
    {"name": "Eve", "age": None, "salary": None},
    {"name": "Frank", "age": 28, "salary": 55000},
]

ORCHESTRATOR = [
    "First the cleaner.\n```python\n"
    "cleaner.runtime.update_variable('data', raw_data)\n"
    "result = await cleaner.run('Remove records with None in any field into cleaned_data')\n"
    "cleaned_data = await cleaner.runtime.retrieve('cleaned_data')\n"
    "print(result.content, len(cleaned_data))\n```",
    "Now the analyzer.\n```python\n"
    "analyzer.runtime.update_variable('data', cleaned_data)\n"
    "result = await analyzer.run('Compute total_records, avg_age, avg_salary into insights')\n"
    "insights = await analyzer.runtime.retrieve('insights')\n"
    "print(insights)\n```",
    "The cleaner kept 3 of the 6 records; their average age is 31 and average salary 58,333.",
]
CLEANER = [
    "```python\ncleaned_data = [r for r in data if all(v is not None for v in r.values())]\n"
    "print(len(cleaned_data))\n```",
    "Kept 3 of 6 records.",
]
ANALYZER = [
    "```python\nn = len(data)\n"
    "insights = {'total_records': n, 'avg_age': sum(r['age'] for r in data) / n,\n"
    "            'avg_salary': round(sum(r['salary'] for r in data) / n, 2)}\n"
    "print(insights)\n```",
    "insights is ready.",
]


async def main() -> None:
    cleaner = CaveAgent(
        pick_model(CLEANER),
        runtime=IPythonRuntime(
            variables=[
                Variable("data", [], "Input: list of dicts with keys 'name', 'age', 'salary'"),
                Variable("cleaned_data", [], "Output: list of dicts with no None in any field"),
            ]
        ),
    )
    analyzer = CaveAgent(
        pick_model(ANALYZER),
        runtime=IPythonRuntime(
            variables=[
                Variable("data", [], "Input: list of dicts with keys 'name', 'age', 'salary'"),
                Variable("insights", {}, "Output: dict of total_records, avg_age, avg_salary"),
            ]
        ),
    )
    orchestrator = CaveAgent(
        pick_model(ORCHESTRATOR),
        runtime=IPythonRuntime(
            variables=[
                Variable("raw_data", RAW_DATA, "Raw dataset with potential null values"),
                Variable("cleaner", cleaner, "Cleaner agent: fills cleaned_data from data"),
                Variable("analyzer", analyzer, "Analyzer agent: fills insights from data"),
                Variable("cleaned_data", [], "Cleaned data from the cleaner"),
                Variable("insights", {}, "Insights from the analyzer"),
            ]
        ),
        instructions="You are a supervisor agent. You coordinate the cleaner and the analyzer.",
        max_steps=12,
    )
    async for event in orchestrator.stream_events(
        "Clean the raw_data using cleaner, then analyze it using analyzer"
    ):
        show(event)
    cleaned = await orchestrator.runtime.retrieve("cleaned_data")
    insights = await orchestrator.runtime.retrieve("insights")
    print(f"\ncleaned: {[r['name'] for r in cleaned]}")
    print(f"insights: {insights}")
    for name, agent in (
        ("orchestrator", orchestrator),
        ("cleaner", cleaner),
        ("analyzer", analyzer),
    ):
        print(f"{name} namespace: {', '.join(await agent.runtime.names())}")
        await agent.runtime.stop()


if __name__ == "__main__":
    asyncio.run(main())
