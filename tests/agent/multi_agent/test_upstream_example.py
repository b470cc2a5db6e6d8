"""Upstream's multi-agent example (orchestrator, cleaner, analyzer), end to end."""

from __future__ import annotations

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable

RAW = [
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
    "print(result.status.value, len(cleaned_data))\n```",
    "Now the analyzer (synchronously this time).\n```python\n"
    "analyzer.runtime.update_variable('data', cleaned_data)\n"
    "result = analyzer.run_sync('Compute total_records, avg_age, avg_salary into insights')\n"
    "insights = await analyzer.runtime.retrieve('insights')\n"
    "print(insights)\n```",
    "Cleaned 6 records down to 3; average age 31.0, average salary 58,333.33.",
]
CLEANER = [
    "```python\n"
    "cleaned_data = [r for r in data if all(v is not None for v in r.values())]\n"
    "scratch = 'cleaner only'\n"
    "print(len(cleaned_data))\n```",
    "Kept 3 of 6 records.",
]
ANALYZER = [
    "```python\n"
    "n = len(data)\n"
    "insights = {'total_records': n, 'avg_age': sum(r['age'] for r in data) / n,\n"
    "            'avg_salary': round(sum(r['salary'] for r in data) / n, 2)}\n"
    "print(insights)\n```",
    "insights is ready.",
]


def build() -> tuple[CaveAgent, CaveAgent, CaveAgent]:
    cleaner = CaveAgent(
        ScriptedModel(CLEANER),
        runtime=IPythonRuntime(
            variables=[
                Variable("data", [], "Input: list of dicts with keys 'name', 'age', 'salary'"),
                Variable("cleaned_data", [], "Output: list of dicts with no None values"),
            ]
        ),
    )
    analyzer = CaveAgent(
        ScriptedModel(ANALYZER),
        runtime=IPythonRuntime(
            variables=[
                Variable("data", [], "Input: list of dicts with keys 'name', 'age', 'salary'"),
                Variable("insights", {}, "Output: total_records, avg_age, avg_salary"),
            ]
        ),
    )
    orchestrator = CaveAgent(
        ScriptedModel(ORCHESTRATOR),
        runtime=IPythonRuntime(
            variables=[
                Variable("raw_data", RAW, "Raw dataset with potential null values"),
                Variable("cleaner", cleaner, "Cleaner agent"),
                Variable("analyzer", analyzer, "Analyzer agent"),
                Variable("cleaned_data", [], "Cleaned data from cleaner agent"),
                Variable("insights", {}, "Insights from analyzer agent"),
            ]
        ),
        instructions="You are a supervisor agent. You coordinate the cleaner and the analyzer.",
        max_steps=20,
        max_exec_output=50000,
    )
    return orchestrator, cleaner, analyzer


async def test_orchestrator_drives_cleaner_and_analyzer():
    orchestrator, cleaner, analyzer = build()
    events = [
        e
        async for e in orchestrator.stream_events(
            "Clean the raw_data using cleaner, then analyze it using analyzer"
        )
    ]
    assert events[-2].type is EventType.FINAL_RESPONSE and events[-2].agent is None
    cleaned = await orchestrator.runtime.retrieve("cleaned_data")
    assert [r["name"] for r in cleaned] == ["Alice", "Diana", "Frank"]
    insights = await orchestrator.runtime.retrieve("insights")
    assert insights == {"total_records": 3, "avg_age": 31.0, "avg_salary": 58333.33}
    assert "completed 3" in orchestrator.history[2]["content"]

    # Separate namespaces: each runtime holds only its own names.
    orch_names = set(await orchestrator.runtime.names())
    cleaner_names = set(await cleaner.runtime.names())
    analyzer_names = set(await analyzer.runtime.names())
    assert {"raw_data", "cleaner", "analyzer", "cleaned_data", "insights"} <= orch_names
    assert "data" not in orch_names and "scratch" not in orch_names and "n" not in orch_names
    assert cleaner_names == {"data", "cleaned_data", "scratch"}
    assert analyzer_names == {"data", "insights", "n"}
    assert raw_unchanged(await orchestrator.runtime.retrieve("raw_data"))

    # The sub-agents' events reached the orchestrator's stream, tagged and in order,
    # inside the orchestrator's own cell (between its code and its output).
    tagged = [(e.agent, e.type) for e in events if e.agent]
    assert (
        "cleaner",
        EventType.CODE,
    ) in tagged and ("analyzer", EventType.FINAL_RESPONSE) in tagged
    codes = [i for i, e in enumerate(events) if e.type is EventType.CODE and e.agent is None]
    outputs = [
        i for i, e in enumerate(events) if e.type is EventType.EXECUTION_OUTPUT and e.agent is None
    ]
    cleaner_idx = [i for i, e in enumerate(events) if e.agent == "cleaner"]
    analyzer_idx = [i for i, e in enumerate(events) if e.agent == "analyzer"]
    assert codes[0] < min(cleaner_idx) and max(cleaner_idx) < outputs[0]
    assert codes[1] < min(analyzer_idx) and max(analyzer_idx) < outputs[1]
    streamed = (EventType.TEXT, EventType.OUTPUT)  # chunks of a reply, of a cell's output
    cleaner_kinds = [events[i].type for i in cleaner_idx if events[i].type not in streamed]
    assert cleaner_kinds == [
        EventType.USER,
        EventType.STEP,
        EventType.USAGE,
        EventType.CODE,
        EventType.EXECUTION_OUTPUT,
        EventType.STEP,
        EventType.USAGE,
        EventType.FINAL_RESPONSE,
    ]
    # Each agent kept its own conversation; usage is per agent.
    assert cleaner.history[-1]["content"] == "Kept 3 of 6 records."
    assert cleaner.usage.model_calls == 2 and analyzer.usage.model_calls == 2
    assert orchestrator.usage.model_calls == 3


def raw_unchanged(data: list[dict]) -> bool:
    return data == RAW and len(data) == 6


async def test_subagent_is_described_usefully_in_the_namespace():
    orchestrator, _, _ = build()
    request = await orchestrator.build_request()
    namespace = request[-1]["content"].split("Namespace (live):", 1)[1]
    line = next(row for row in namespace.splitlines() if row.startswith("- cleaner:"))
    assert line.startswith("- cleaner: CaveAgent = sub-agent; its runtime holds data, cleaned_data")
    assert "`r = await cleaner.run(task)`" in line and "cleaner.run_sync(task)" in line
    assert "cleaner.runtime.retrieve(name)" in line and line.endswith("# Cleaner agent")
    assert repr(orchestrator) == "CaveAgent(model='scripted', runtime=ipython)"


async def test_run_returns_normally_and_status_is_visible_to_generated_code():
    sub = CaveAgent(ScriptedModel([]), name="broken")  # no replies: it fails
    parent = CaveAgent(
        ScriptedModel(
            [
                "```python\nr = await broken.run('x')\nprint(r.status.value, r.error[:30])\n```",
                "The helper failed; I will do it myself.",
            ]
        ),
        runtime=IPythonRuntime(variables=[Variable("broken", sub)]),
    )
    response = await parent.run("use the helper")
    assert response.status is AgentStatus.COMPLETED
    assert "error ScriptedModel ran out of repl" in parent.history[2]["content"]
