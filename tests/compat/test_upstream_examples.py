"""Every port of upstream's examples (examples/upstream/) runs, with a scripted model.

Each script runs as `__main__`, unchanged: the hosted model classes it builds from
LLM_MODEL_ID, LLM_API_KEY and LLM_BASE_URL are replaced by a `ConversationModel`
(tests/compat/scripted.py) that writes the code a model would, so the assertions
check what upstream's example shows: the values it retrieves and prints, the state the
agents leave in their runtimes, and that every run completes. No network.
"""

from __future__ import annotations

import asyncio

import pytest

from cave_tui.agent import AgentStatus, EventType
from tests.compat.scripted import ConversationModel, ExampleRun, Turn, run_example
from tests.helpers.paths import REPO_ROOT

EXAMPLES = REPO_ROOT / "examples" / "upstream"
ENV = {
    "LLM_MODEL_ID": "test-model",
    "LLM_API_KEY": "test-key",
    "LLM_BASE_URL": "http://127.0.0.1:9/v1",
}


@pytest.fixture
def run(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]):
    """`run(name, turns)` -> (ExampleRun, stdout) for examples/upstream/<name>.py."""
    for key, value in ENV.items():
        monkeypatch.setenv(key, value)

    def go(name: str, turns: list[Turn], **model_options) -> tuple[ExampleRun, str]:
        model = ConversationModel(turns, **model_options)
        result = run_example(EXAMPLES / f"{name}.py", model, monkeypatch)
        return result, capsys.readouterr().out

    return go


def retrieve(agent, name: str):
    return asyncio.run(agent.runtime.retrieve(name))


def assert_model_from_env(result: ExampleRun, kind: str, **extra: str) -> None:
    """The example built its model as upstream's does, from the three variables."""
    assert result.built, "the example built no model"
    for name, args, kwargs in result.built:
        assert name == kind and not args
        assert kwargs == {
            "model_id": "test-model",
            "api_key": "test-key",
            "base_url": "http://127.0.0.1:9/v1",
            **extra,
        }


def assert_all_completed(result: ExampleRun, runs: int) -> None:
    assert [r.status for r in result.responses] == [AgentStatus.COMPLETED] * runs


def test_every_upstream_example_has_a_port_and_a_test():
    ported = {p.stem for p in EXAMPLES.glob("*.py")}
    assert ported == {
        "basic_usage", "compaction_demo", "multi_agent", "multi_turn", "object_methods",
        "retry_demo", "runtime_state", "skill_code_review", "skill_data_processor",
        "skill_smart_home", "stream", "timeout_demo",
    }  # fmt: skip
    tested = {name.removeprefix("test_") for name in globals() if name.startswith("test_")}
    assert ported <= tested


def test_basic_usage(run):
    result, out = run(
        "basic_usage",
        [
            Turn("Calculate 5 plus 3", "print(add(5, 3))", "5 plus 3 is 8."),
            Turn("What is 4 times 6?", "print(multiply(4, 6))", "4 times 6 is 24."),
            Turn(
                "Use processor to sort the numbers",
                "result = processor.process(numbers)\nprint(calculate_sum(result[0], result[-1]))",
                "`result` holds the sorted numbers.",
            ),
            Turn(
                "Calculate 10 plus 20, then multiply",
                "total = multiply(add(10, 20), 3)\nprint(total)",
                "The result is 90.",
            ),
        ],
    )
    assert_model_from_env(result, "LiteLLMModel", custom_llm_provider="openai")
    assert "Result: 5 plus 3 is 8." in out and "Result: 4 times 6 is 24." in out
    assert "Adding 1 and 9" in out  # calculate_sum ran in the runtime
    assert "Sorted result: [1, 1, 3, 4, 5, 9]" in out
    calculator, sorter, streamer = result.agents
    assert retrieve(sorter, "result") == [1, 1, 3, 4, 5, 9]
    assert retrieve(streamer, "total") == 90
    assert "[code] total = multiply(add(10, 20), 3)" in out
    assert "[final_response] The result is 90." in out
    assert_all_completed(result, 3)  # the streamed turn is checked by its final response
    assert len(calculator.history) == 8  # two turns of request, code, output, answer


def test_runtime_state(run):
    result, out = run(
        "runtime_state",
        [
            Turn("Sort the numbers list", "sorted_numbers = sorted(numbers)", "Sorted."),
            Turn("Calculate the sum", "sum_result = sum(numbers)", "The sum is 36."),
        ],
    )
    assert_model_from_env(result, "OpenAIServerModel")
    assert "Sorted numbers: [1, 1, 2, 3, 4, 5, 5, 6, 9]" in out and "Sum: 36" in out
    assert_all_completed(result, 2)


def test_object_methods(run):
    result, out = run(
        "object_methods",
        [
            Turn(
                "sort and deduplicate", "processed_data = processor.process_list(numbers)", "Done."
            ),
            Turn(
                "Filter numbers greater than 4",
                "filtered_data = processor.filter_numbers(numbers, 4)",
                "Four numbers are greater than 4.",
            ),
        ],
    )
    assert "Processed data: [1, 2, 3, 4, 5, 6, 9]" in out
    assert "Filtered data: [5, 9, 6, 5]" in out
    assert_all_completed(result, 2)


def test_multi_turn(run):
    result, out = run(
        "multi_turn",
        [
            Turn("Analyze the numbers", "stats = analyzer.analyze(numbers)\nprint(stats)", "Done."),
            Turn("What is the average", "print(stats['avg'])", "The average is 4.0."),
            Turn(
                "Is the maximum value (9)",
                "print(stats['max'] - stats['avg'])",
                "Yes: 9 is 5.0 above the average.",
            ),
        ],
    )
    assert "Basic stats: {'min': 1, 'max': 9, 'avg': 4.0, 'len': 9}" in out
    assert "Average value: The average is 4.0." in out
    assert "Interpretation: Yes: 9 is 5.0 above the average." in out
    (agent,) = result.agents
    # The later turns read `stats`, which the first left in the runtime.
    outputs = [e.content for e in result.events_of(agent, EventType.EXECUTION_OUTPUT)]
    assert "4.0" in outputs[1] and "5.0" in outputs[2]
    assert_all_completed(result, 3)


def test_stream(run):
    result, out = run(
        "stream",
        [
            Turn(
                "Use processor to sort the numbers",
                "result = processor.process(numbers)\nprint(result)",
                "The numbers sorted: [1, 1, 3, 4, 5, 9].",
            )
        ],
    )
    assert "Executing code" in out and "Execution output" in out and "Final response" in out
    assert "Runtime state: {'numbers': [3, 1, 4, 1, 5, 9], 'result': [1, 1, 3, 4, 5, 9]}" in out
    (agent,) = result.agents
    assert result.events_of(agent, EventType.FINAL_RESPONSE)[0].content.startswith("The numbers")


def compaction_turns() -> list[Turn]:
    """The compaction demo's five turns (0.7's port and 0.8's)."""
    # Each cell prints a month-by-month table (~400 tokens), as a verbose model would: by the
    # fourth turn the conversation passes 80 % of the 3,000-token window.
    monthly = (
        "for m, a in enumerate(sales, 1):\n"
        "    print(f'month {m} of the year: sales of {a} units, {a / sum(sales):.1%} of the '\n"
        "          f'year and {a - sum(sales) / 12:+.1f} against the monthly average')"
    )
    return [
        Turn("Analyze the sales data", f"stats = analyze(sales)\n{monthly}\nprint(stats)", "Ok."),
        Turn(
            "above-average sales",
            f"{monthly}\nabove = [i + 1 for i, s in enumerate(sales) if s > stats['mean']]\n"
            "print(above)",
            "Months 4, 5, 7, 8 and 12.",
        ),
        Turn(
            "quarter-by-quarter",
            f"{monthly}\nquarters = [sum(sales[i:i + 3]) for i in range(0, 12, 3)]\n"
            "print(stats['sum'], quarters)",
            "5710 in total.",
        ),
        Turn(
            "month-over-month growth",
            f"{monthly}\ngrowth = [round(b / a - 1, 3) for a, b in zip(sales, sales[1:])]\n"
            "print(growth)",
            "Growth varies a lot.",
        ),
        Turn(
            "Summarize everything into a report",
            "report = {'stats': stats, 'above_average': above, 'quarters': quarters,\n"
            "          'growth': growth}\nprint(report)",
            "The report is in `report`.",
        ),
    ]


def test_compaction_demo(run):
    result, out = run("compaction_demo", compaction_turns())
    assert_all_completed(result, 5)
    (agent,) = result.agents
    compacted = result.events_of(agent, EventType.COMPACTED)
    assert compacted, "a 3,000-token window should have been compacted"
    assert all(e.tokens_after < e.tokens_before for e in compacted)
    report = retrieve(agent, "report")
    assert report["quarters"] == [710, 1990, 1650, 1360] and report["above_average"] == [
        4,
        5,
        7,
        8,
        12,
    ]
    assert "=== Final report ===" in out and "'quarters': [710, 1990, 1650, 1360]" in out


def test_retry_demo(run):
    code = (
        "records = generate_data(50)\n"
        "by_name = {}\n"
        "for r in records:\n"
        "    by_name.setdefault(r['name'], []).append(r['score'])\n"
        "rows = sorted(((sum(s) / len(s), min(s), max(s), n) for n, s in by_name.items()),\n"
        "              reverse=True)\n"
        "summary = '\\n'.join(f'{i}. {n}: avg {a:.1f}, min {lo}, max {hi}'\n"
        "                    for i, (a, lo, hi, n) in enumerate(rows, 1))\n"
        "print(summary)"
    )
    # The code reply is cut by the output limit half-way: the agent asks for the rest.
    result, out = run("retry_demo", [Turn("Generate 50 sample records", code, "Ranked.", cut=120)])
    assert_all_completed(result, 1)
    (agent,) = result.agents
    notices = [e.content for e in result.events_of(agent, EventType.NOTICE)]
    assert any("cut by the output limit" in n for n in notices)
    summary = retrieve(agent, "summary")
    lines = summary.splitlines()
    assert 1 <= len(lines) <= 8 and all(": avg " in line for line in lines)
    assert "=== Summary ===" in out and lines[0] in out


def test_multi_agent(run):
    orchestrator = (
        "cleaner.runtime.update_variable('data', raw_data)\n"
        "await cleaner.run('Drop every record with a None value into cleaned_data')\n"
        "cleaned_data = await cleaner.runtime.retrieve('cleaned_data')\n"
        "analyzer.runtime.update_variable('data', cleaned_data)\n"
        "await analyzer.run('Compute count, mean age, mean salary and mean rating into insights')\n"
        "insights = await analyzer.runtime.retrieve('insights')\n"
        "print(len(cleaned_data), insights)"
    )
    cleaner = "cleaned_data = [r for r in data if None not in r.values()]\nprint(len(cleaned_data))"
    analyzer = (
        "n = len(data)\n"
        "insights = {'count': n,\n"
        "            'mean_age': sum(r['age'] for r in data) / n,\n"
        "            'mean_salary': sum(r['salary'] for r in data) / n,\n"
        "            'mean_rating': round(sum(r['rating'] for r in data) / n, 2)}"
    )
    result, out = run(
        "multi_agent",
        [
            Turn("Clean the raw_data using cleaner", orchestrator, "Cleaned 9 records to 3."),
            Turn("Drop every record with a None value", cleaner, "Kept 3 records."),
            Turn("Compute count, mean age", analyzer, "insights is ready."),
        ],
    )
    assert_model_from_env(result, "OpenAIServerModel")
    cleaner_agent, analyzer_agent, orchestrator_agent = result.agents
    assert_all_completed(result, 3)
    cleaned = retrieve(orchestrator_agent, "cleaned_data")
    assert [r["name"] for r in cleaned] == ["Alice", "Frank", "Ivy"]
    assert retrieve(cleaner_agent, "cleaned_data") == cleaned
    insights = retrieve(orchestrator_agent, "insights")
    assert insights == retrieve(analyzer_agent, "insights")
    assert insights["count"] == 3 and insights["mean_salary"] == pytest.approx(55666.67, abs=0.01)
    assert "9 raw → 3 cleaned (6 removed)" in out and "Mean Salary" in out


def test_timeout_demo(run):
    result, out = run(
        "timeout_demo",
        [Turn("Call slow_compute(10)", "print(slow_compute(10))", "It timed out after 5 s.")],
    )
    in_process, kernel = result.agents
    for agent in (in_process, kernel):
        errors = result.events_of(agent, EventType.EXECUTION_ERROR)
        assert len(errors) == 1 and errors[0].timed_out
        final = result.events_of(agent, EventType.FINAL_RESPONSE)
        assert [e.content for e in final] == ["It timed out after 5 s."]
    # Per runtime: the example's render_user_prompt, and the agent's own rendering
    # (stream_events renders with display on, as upstream's does).
    assert out.count("Call slow_compute(10)") == 4
    assert "IPyKernelRuntime (separate process)" in out


SKILL_LIST = [
    "  - code-review: Review Python code for bugs, security issues and best practices",
    "  - data-processor: Analyze sales data",
    "  - smart-home: Control smart home devices",
]


def test_skill_code_review(run):
    result, out = run(
        "skill_code_review",
        [
            Turn(
                "Review this code for security issues",
                "print(activate_skill('code-review'))",
                "Issues: SQL injection (High) in the query. Suggestions: use parameters.",
            )
        ],
    )
    assert_model_from_env(result, "LiteLLMModel", custom_llm_provider="openai")
    assert all(line in out for line in SKILL_LIST)
    assert "activate_skill" in out  # describe_functions() lists it
    assert "Issues: SQL injection (High)" in out
    (agent,) = result.agents
    # The skill's instructions reached the model whole, after the cell's output.
    observation = result.events_of(agent, EventType.EXECUTION_OUTPUT)[0].content
    assert "Read the code; do not run it." in observation
    assert_all_completed(result, 1)


def test_skill_data_processor(run):
    result, out = run(
        "skill_data_processor",
        [
            Turn(
                "How are our overall sales doing?",
                "activate_skill('data-processor')\n"
                "total = sum(s['amount'] for s in sales_data)\nprint(total)",
                "Total sales are 3670.",
            ),
            Turn(
                "north region performing against target",
                "north = sum(s['amount'] for s in sales_data if s['region'] == 'north')\n"
                "print(north, regional_targets['north'])",
                "North sold 2320 against a target of 2000.",
            ),
            Turn(
                "commissions for electronics",
                "commission = sum(s['amount'] * 0.08 for s in sales_data\n"
                "                 if s['category'] == 'electronics')\nprint(commission)",
                "Electronics commissions come to 140.0.",
            ),
        ],
    )
    assert all(line in out for line in SKILL_LIST)
    assert "Assistant: Total sales are 3670." in out
    assert "Assistant: Electronics commissions come to 140.0." in out
    (agent,) = result.agents
    assert retrieve(agent, "north") == 2320 and retrieve(agent, "commission") == 140.0
    assert retrieve(agent, "regional_targets")["north"] == 2000  # injected on activation
    assert_all_completed(result, 3)


def test_skill_smart_home(run):
    result, out = run(
        "skill_smart_home",
        [
            Turn(
                "status of all the lights",
                "activate_skill('smart-home')\n"
                "lights = {k: v['state'] for k, v in get_status().items()\n"
                "          if v['type'] == 'light'}\n"
                "print(lights)",
                "Only the kitchen light is on.",
            ),
            Turn(
                "living room light to 70%",
                "print(set_light('living_room_light', 'on', 70))",
                "The living room light is on at 70%.",
            ),
            Turn(
                "Is the front door locked?",
                "print(get_status('front_door')['state'])",
                "Yes, it is locked.",
            ),
            Turn(
                "Lock the garage door",
                "set_door('garage_door', 'locked')\nset_light('kitchen_light', 'off')\n"
                "state = get_status()\nprint(state['garage_door'], state['kitchen_light'])",
                "The garage door is locked and the kitchen light is off.",
            ),
        ],
    )
    assert "Assistant: Only the kitchen light is on." in out
    (agent,) = result.agents
    state = retrieve(agent, "state")
    assert state["garage_door"]["state"] == "locked"
    assert state["kitchen_light"] == {"type": "light", "state": "off", "brightness": 0}
    assert state["living_room_light"] == {"type": "light", "state": "on", "brightness": 70}
    assert_all_completed(result, 4)
