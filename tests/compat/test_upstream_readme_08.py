"""Every Python example of upstream CaveAgent 0.8's README runs under cave_tui, renamed.

The README is upstream's 0.8 one, kept verbatim with its MIT notice in
data/upstream-readme-0.8.md. The machinery is test_upstream_readme.py's: each block is
claimed by one scenario (found by a line only it has), runs as written with `cave_agent`
renamed, and is checked for what it shows. Blocks 0.8 kept from 0.7 reuse 0.7's scenarios;
the new ones (typed events, closing a stream, renderers, budgets, `OpenAIModel`) are here.
0.8's README has no slip to patch (its multi-agent block binds the name it reads)."""

from __future__ import annotations

import asyncio
import re
from pathlib import Path
from typing import Any

import pytest

from tests.compat import test_upstream_readme as v07
from tests.compat.scripted import ExampleRun, Turn

README = Path(__file__).parent / "data" / "upstream-readme-0.8.md"
Scenario = v07.Scenario

STREAM_PRELUDE = """
from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime, Variable
agent = CaveAgent(MODEL, runtime=IPythonRuntime(variables=[Variable("data", [1, 2, 3, 4])]))
q = "Analyze this data"
"""
SUM_TURN = Turn("Analyze this data", "total = sum(data)\nprint(total)", "It sums to 10.")


def check_typed_events(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    assert "\nExecuting: total = sum(data)\nprint(total)" in out
    assert "Result: 10" in out  # ExecutionResultEvent: success and the cell's output
    # The StoppedEvent comes last: reason, steps, tokens, time.
    # (the agent's own `display=` footer reads "completed · 2 steps · <time> · ...")
    lines = out.rstrip().splitlines()
    assert re.fullmatch(r"completed · 2 steps · \d+ tokens · \d+\.\ds", lines[-1]), lines[-3:]


def check_aclosing(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    from cave_tui.events import CodeEvent

    seen = ns["seen"]
    assert isinstance(seen[-1], CodeEvent)  # the loop broke there, and the stream closed
    with pytest.raises(StopAsyncIteration):  # closed: nothing more comes
        asyncio.run(ns["stream"].__anext__())
    with pytest.raises(KeyError):  # the code was never run
        asyncio.run(ns["agent"].runtime.retrieve("total"))


def check_renderers(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    from cave_tui.events import StopReason

    assert ns["response"].stop_reason is StopReason.COMPLETED
    assert ns["response"].content == "It sums to 10."
    # Two runs, each drawn once by the renderer: the agent's own display (on by default,
    # 0.7's) stayed off for them, or each run's code would be drawn twice.
    assert out.count("total = sum(data)") == 2
    assert out.count("done  ") == 2


def check_budget(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    from cave_tui.events import StopReason

    agent = ns["agent"]
    assert agent.budget.max_total_tokens == 200_000
    assert ns["response"].stop_reason is StopReason.COMPLETED  # far from the budget


def check_openai_model(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    from cave_tui.models import OpenAIModel, OpenAIServerModel

    model = ns["model"]
    assert OpenAIModel is OpenAIServerModel and isinstance(model, OpenAIModel)
    assert model.model_id == "gpt-4" and model.base_url == "https://api.openai.com/v1"
    assert model.filters_asynchronously is False
    assert "filters_asynchronously" not in model.request_kwargs  # never sent to the provider


SCENARIOS: dict[str, Scenario] = {
    name: v07.SCENARIOS[name]
    for name in (
        "hello_world",
        "ipython_runtime",
        "kernel_runtime",
        "data_visualization",
        "function_calling",
        "stateful_objects",
        "multi_agent",
        "security_rules",
        "using_skills",
        "injection_module",
        "compaction",
        "litellm_models",
    )
}
SCENARIOS |= {
    "typed_events": Scenario(
        mark="case StoppedEvent():",
        prelude=STREAM_PRELUDE,  # a plain agent: its stream ends with a StoppedEvent
        turns=[SUM_TURN],
        check=check_typed_events,
    ),
    "aclosing": Scenario(
        mark="async with aclosing(stream):",
        prelude=STREAM_PRELUDE
        + """
seen = []
def should_stop(event):
    from cave_tui.events import CodeEvent
    seen.append(event)
    return isinstance(event, CodeEvent)
""",
        turns=[SUM_TURN],
        check=check_aclosing,
    ),
    "renderers": Scenario(
        mark="response = await render_run(agent, q)",
        prelude=STREAM_PRELUDE,
        turns=[SUM_TURN],
        check=check_renderers,
    ),
    "budget": Scenario(
        mark="max_total_tokens=200_000",
        prelude="""
from cave_tui import CaveAgent, StopReason
from cave_tui.runtime import IPythonRuntime
model = MODEL
runtime = IPythonRuntime()
""",
        turns=[Turn("...", "x = 1", "Done.")],
        check=check_budget,
    ),
    "openai_model": Scenario(
        mark="await model.aclose()",
        check=check_openai_model,
        scripted=False,
    ),
}


def test_every_python_block_of_the_08_readme_has_one_scenario() -> None:
    blocks = v07.python_blocks(README)
    assert len(blocks) == 17
    for block in blocks:
        claimed = [name for name, s in SCENARIOS.items() if s.mark in block]
        assert len(claimed) == 1, f"README block claimed by {claimed}:\n{block[:300]}"


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_08_readme_block_runs(
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    v07.run_scenario(name, SCENARIOS[name], README, {}, monkeypatch, capsys, tmp_path)
