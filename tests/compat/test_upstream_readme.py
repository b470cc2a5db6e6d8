"""Every Python example of upstream CaveAgent's README runs under cave_tui, import renamed.

The README is upstream's, kept verbatim with its MIT notice in data/upstream-readme.md
($CAVE_UPSTREAM_README reads another copy), so the test runs on any machine. Each Python
block is claimed by exactly one scenario below, found by a line only that block has. A
scenario supplies what the README leaves to the reader (its `prelude`: `model`,
`my_func`, a database, ...), a scripted model's turns, and checks of what the block is
meant to do. Each block runs as written, with `cave_agent` renamed to `cave_tui`;
top-level `await` runs as in a notebook. Two README slips are patched (`FIXUPS`), each
asserted present so the patch goes when upstream fixes it."""

from __future__ import annotations

import ast
import asyncio
import inspect
import os
import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from cave_tui.agent import AgentStatus, EventType
from tests.compat.scripted import (
    ConversationModel,
    ExampleRun,
    Turn,
    record_agents,
    substitute_models,
)

README = Path(
    os.environ.get("CAVE_UPSTREAM_README", Path(__file__).parent / "data" / "upstream-readme.md")
)


def python_blocks(readme: Path = README) -> list[str]:
    text = readme.read_text(encoding="utf-8")
    return re.findall(r"^```python\n(.*?)^```$", text, re.S | re.M)


@dataclass
class Scenario:
    """How one README block runs here and what it must have done."""

    mark: str  # a line (or part of one) only this block has
    check: Callable[[dict[str, Any], ExampleRun, str], None]
    prelude: str = ""  # harness code: the names the block takes as given
    turns: list[Turn] = field(default_factory=list)
    scripted: bool = True  # hosted model classes replaced by the scripted model
    in_tmp_dir: bool = False  # run in an empty working directory (the skills block)


def retrieve(runtime: Any, name: str) -> Any:
    return asyncio.run(runtime.retrieve(name))


def completed(run: ExampleRun, count: int) -> None:
    assert [r.status for r in run.responses] == [AgentStatus.COMPLETED] * count


# -- the scenarios, in the README's order ------------------------------------------------------
def check_hello_world(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    assert run.built == [
        ("LiteLLMModel", (), {"model_id": "model-id", "api_key": "your-api-key",
                              "custom_llm_provider": "openai"}),
    ]  # fmt: skip
    (agent,) = run.agents
    assert retrieve(agent.runtime, "greeting") == "Hello, world!"
    assert retrieve(agent.runtime, "secret") == "!dlrow ,olleH"  # the given text is kept
    # The block's two prints come last (the agent's own display comes first).
    assert out.splitlines()[-2:] == ["!dlrow ,olleH", "The secret reads: Hello, world!"]
    completed(run, 1)


def check_ipython_runtime(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    runtime, agent = ns["runtime"], ns["agent"]
    assert agent.runtime is runtime and agent.model is ns["model"]
    assert retrieve(runtime, "data") is ns["my_dataframe"]  # the same object, no copy
    assert "my_func(" in runtime.describe_functions()


def check_kernel_runtime(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    response = ns["response"]
    assert response.status is AgentStatus.COMPLETED and response.content == "The data sums to 6."
    (agent,) = run.agents
    outputs = [e.content for e in run.events_of(agent, EventType.EXECUTION_OUTPUT)]
    assert "12" in outputs[0]  # my_func(6) ran in the kernel


def check_visualization(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    (config,) = ns["configs"]
    assert config["title"]["text"] == "Air Quality - Past Week"
    assert config["series"][0]["data"] == [12.0, 18.5, 25.0, 9.5, 30.0, 22.0, 15.5]
    assert ns["rendered"] == [config]  # render_echarts was handed the real config
    # What the host retrieved is the object the agent worked on, not a copy.
    assert retrieve(ns["runtime"], "echarts_config_manager") is ns["mgr"]
    completed(run, 1)


def check_function_calling(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    assert "[{'name': 'buy groceries', 'done': False}]" in out.splitlines()
    assert retrieve(ns["runtime"], "tasks") == [{"name": "buy groceries", "done": False}]
    completed(run, 1)


def check_stateful_objects(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    light = ns["light"]
    assert type(light).__name__ == "Light" and light.brightness == 20
    assert retrieve(ns["runtime"], "thermostat").target == 22
    completed(run, 1)


def check_multi_agent(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    cleaner, analyzer, orchestrator = run.agents
    assert retrieve(cleaner.runtime, "cleaned_data") == [
        {"name": "Ada", "age": 36},
        {"name": "Linus", "age": 28},
    ]
    assert ns["insights"] == {"count": 2, "mean_age": 32.0}
    assert retrieve(analyzer.runtime, "data") == retrieve(cleaner.runtime, "cleaned_data")
    assert retrieve(orchestrator.runtime, "cleaner") is cleaner
    completed(run, 3)


def check_streaming(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    assert "Executing: total = sum(data)\nprint(total)\n" in out
    # The result follows; its exact text is cave's observation ("Output:\n10\n[changed: ...]"),
    # where upstream's is the cell's stdout alone: see test_upstream_core_gaps.py.
    result = out.split("Result: ", 1)[1]
    assert "10" in result.split()


def check_security(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    from cave_tui.security import SecurityError

    runtime = ns["runtime"]
    for code in ["import os", "eval('1')", "print.__globals__", "cmd = 'sudo reboot'"]:
        result = asyncio.run(runtime.execute(code))
        assert not result.success and isinstance(result.error, SecurityError), code
    assert asyncio.run(runtime.execute("x = sum([1, 2])")).success


def check_using_skills(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    coded, from_file, from_dir = run.agents
    assert [s.name for s in from_file.skills] == ["my-skill"]
    assert sorted(s.name for s in ns["skills"]) == ["charts", "my-skill"]
    assert from_dir.skills == ns["skills"]
    # The skill built in code brings its function and variable on activation.
    result = asyncio.run(coded.runtime.execute("activate_skill('my-skill')\nprint(my_func(2))"))
    assert result.success and "4" in result.output
    assert retrieve(coded.runtime, "config") == {}
    assert "Follow these steps" in str(coded.skills[0].body_content)


def check_injection_module(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    (agent,) = run.agents
    assert retrieve(agent.runtime, "result") == {"mean": 2.0, "count": 3}
    assert retrieve(agent.runtime, "CONFIG") == {"threshold": 0.5, "max_items": 1000}
    made = retrieve(agent.runtime, "made")
    assert type(made).__name__ == "AnalysisResult" and made.status == "ok"
    completed(run, 1)


def check_compaction(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    agent = ns["agent"]
    assert agent.context_window == 128_000
    assert agent.compactor is not None and agent.compactor.context_window == 128_000


def check_openai_model(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    from cave_tui.models import OpenAIServerModel

    model = ns["model"]
    assert isinstance(model, OpenAIServerModel) and model.model_id == "gpt-4"
    assert model.base_url == "https://api.openai.com/v1" and model.api_key == "your-api-key"


def check_litellm_models(ns: dict[str, Any], run: ExampleRun, out: str) -> None:
    from cave_tui.models.litellm_model import LiteLLMModel  # the real class, not the recorder

    assert isinstance(ns["model"], LiteLLMModel) and ns["model"].model_id == "gemini/gemini-pro"
    assert [
        (kwargs["model_id"], kwargs.get("custom_llm_provider")) for _, _, kwargs in run.built
    ] == [
        ("gpt-4", "openai"),
        ("claude-3-sonnet-20240229", "anthropic"),
        ("gemini/gemini-pro", None),
    ]


SCENARIOS: dict[str, Scenario] = {
    "hello_world": Scenario(
        mark='Variable("secret", "!dlrow ,olleH"',
        turns=[
            Turn(
                "Reverse the secret",
                "greeting = reverse(secret)",
                "The secret reads: Hello, world!",
            )
        ],
        check=check_hello_world,
    ),
    "ipython_runtime": Scenario(
        mark='Variable("data", my_dataframe',
        prelude="""
import pandas as pd
from cave_tui import CaveAgent
def my_func(x: int) -> int:
    '''Double x.'''
    return 2 * x
my_dataframe = pd.DataFrame({"x": [1, 2, 3]})
model = MODEL
""",
        check=check_ipython_runtime,
    ),
    "kernel_runtime": Scenario(
        mark="async with IPyKernelRuntime(",
        prelude="""
from cave_tui import CaveAgent
def my_func(x: int) -> int:
    '''Double x.'''
    return 2 * x
model = MODEL
""",
        turns=[Turn("Analyze the data", "print(my_func(sum(data)))", "The data sums to 6.")],
        check=check_kernel_runtime,
    ),
    "data_visualization": Scenario(
        mark="echarts_config_manager",
        prelude="""
import sqlite3
database_engine = sqlite3.connect(":memory:", check_same_thread=False)
database_engine.execute("CREATE TABLE air_quality (day TEXT, pm25 REAL)")
database_engine.executemany(
    "INSERT INTO air_quality VALUES (?, ?)",
    [(f"2025-06-0{i + 1}", v) for i, v in enumerate([12.0, 18.5, 25.0, 9.5, 30.0, 22.0, 15.5])],
)
class EChartsConfigManager:
    '''Collects ECharts option dicts for the web UI.'''
    def __init__(self):
        self.configs = []
    def add_config(self, config: dict) -> None:
        '''Add one chart's ECharts options.'''
        self.configs.append(config)
    def get_configs(self) -> list:
        return list(self.configs)
rendered = []
def render_echarts(config):
    rendered.append(config)
""",
        turns=[
            Turn(
                "air quality trend",
                "import pandas as pd\n"
                "df = pd.read_sql('SELECT day, pm25 FROM air_quality ORDER BY day', engine)\n"
                "echarts_config_manager.add_config({\n"
                "    'title': {'text': 'Air Quality - Past Week'},\n"
                "    'xAxis': {'data': df['day'].tolist()},\n"
                "    'series': [{'name': 'PM2.5', 'type': 'line', 'data': df['pm25'].tolist()}],\n"
                "})",
                "The chart of the past week is ready.",
            )
        ],
        check=check_visualization,
    ),
    "function_calling": Scenario(
        mark="Function(add_task)",
        prelude="""
from cave_tui import CaveAgent
from cave_tui.runtime import Function, IPythonRuntime, Variable
def add_task(tasks: list, name: str) -> dict:
    '''Append a task named name (not done) to tasks and return it.'''
    task = {"name": name, "done": False}
    tasks.append(task)
    return task
def complete_task(tasks: list, name: str) -> None:
    '''Mark the task named name as done.'''
    for task in tasks:
        if task["name"] == name:
            task["done"] = True
model = MODEL
""",
        turns=[Turn("Add 'buy groceries'", "add_task(tasks, 'buy groceries')", "Added.")],
        check=check_function_calling,
    ),
    "stateful_objects": Scenario(
        mark="Type(Thermostat)",
        prelude="""
from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime, Type, Variable
class Light:
    '''A dimmable light.'''
    def __init__(self, room: str):
        self.room, self.brightness = room, 100
    def dim(self, percent: int) -> None:
        '''Set the brightness, 0-100.'''
        self.brightness = percent
class Thermostat:
    '''A thermostat.'''
    def __init__(self):
        self.target = 20
    def set_temperature(self, celsius: float) -> None:
        '''Set the target temperature.'''
        self.target = celsius
model = MODEL
""",
        turns=[
            Turn("Dim the light to 20%", "light.dim(20)\nthermostat.set_temperature(22)", "Done.")
        ],
        check=check_stateful_objects,
    ),
    "multi_agent": Scenario(
        mark="cleaner_agent = CaveAgent(",
        prelude="""
from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime, Variable
raw_data = [{"name": "Ada", "age": 36}, {"name": "Bob", "age": None},
            {"name": "Linus", "age": 28}]
model = MODEL
""",
        turns=[
            Turn(
                "Clean raw_data using cleaner",
                "cleaner.runtime.update_variable('data', raw_data)\n"
                "await cleaner.run('Keep the records without None into cleaned_data')\n"
                "cleaned = await cleaner.runtime.retrieve('cleaned_data')\n"
                "analyzer.runtime.update_variable('data', cleaned)\n"
                "await analyzer.run('Count the records and average the ages into insights')",
                "Cleaned and analysed.",
            ),
            Turn(
                "Keep the records without None",
                "cleaned_data = [r for r in data if None not in r.values()]",
                "Kept 2.",
            ),
            Turn(
                "Count the records and average",
                "insights = {'count': len(data),\n"
                "            'mean_age': sum(r['age'] for r in data) / len(data)}",
                "Done.",
            ),
        ],
        check=check_multi_agent,
    ),
    "streaming": Scenario(
        mark="agent.stream_events(",
        prelude="""
from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime, Variable
agent = CaveAgent(MODEL, runtime=IPythonRuntime(variables=[Variable("data", [1, 2, 3, 4])]),
                  display=False)
""",
        turns=[Turn("Analyze this data", "total = sum(data)\nprint(total)", "It sums to 10.")],
        check=check_streaming,
    ),
    "security_rules": Scenario(
        mark="SecurityChecker(rules)",
        prelude="""
from cave_tui.runtime import IPythonRuntime
from cave_tui.security import AttributeRule, FunctionRule, ImportRule, RegexRule, SecurityChecker
""",
        check=check_security,
    ),
    "using_skills": Scenario(
        mark='SkillDiscovery.from_file(Path("./my-skill/SKILL.md"))',
        prelude="""
from cave_tui.runtime import Function, Variable
def my_func(x: int) -> int:
    '''Double x.'''
    return 2 * x
model = MODEL
""",
        check=check_using_skills,
        in_tmp_dir=True,
    ),
    "injection_module": Scenario(
        mark="__exports__ = [",
        turns=[
            Turn(
                "Analyze [1, 2, 3]",
                "activate_skill('stats')\n"
                "result = analyze_data([1, 2, 3])\n"
                "made = AnalysisResult(result['mean'], result['count'], 'ok')",
                "The mean is 2.0 over 3 values.",
            )
        ],
        check=check_injection_module,
    ),
    "compaction": Scenario(
        mark="context_window=128_000",
        prelude="""
from cave_tui import CaveAgent
from cave_tui.runtime import IPythonRuntime
model = MODEL
runtime = IPythonRuntime()
""",
        check=check_compaction,
    ),
    "openai_model": Scenario(
        mark='base_url="https://api.openai.com/v1"',
        check=check_openai_model,
        scripted=False,
    ),
    "litellm_models": Scenario(
        mark="claude-3-sonnet-20240229",
        check=check_litellm_models,
        scripted=False,
    ),
}

# Slips in upstream's README, patched before the block runs: {scenario: [(old, new)]}.
FIXUPS = {
    # The last line reads `analyzer`, a name the block never binds (it binds
    # `analyzer_agent`); upstream's own run of this block raises NameError there too.
    "multi_agent": [
        (
            'await analyzer.runtime.retrieve("insights")',
            'await analyzer_agent.runtime.retrieve("insights")',
        )
    ],
}


def block_for(scenario: Scenario, readme: Path = README) -> str:
    found = [b for b in python_blocks(readme) if scenario.mark in b]
    assert len(found) == 1, f"{len(found)} README blocks contain {scenario.mark!r}"
    return found[0]


def test_every_python_block_of_the_readme_has_one_scenario():
    blocks = python_blocks()
    assert len(blocks) >= 14
    for block in blocks:
        claimed = [name for name, s in SCENARIOS.items() if s.mark in block]
        assert len(claimed) == 1, f"README block claimed by {claimed}:\n{block[:300]}"


def run_block(code: str, namespace: dict[str, Any]) -> None:
    """Run *code* in *namespace* as a notebook cell would: top-level `await` allowed."""
    compiled = compile(code, "<upstream README>", "exec", flags=ast.PyCF_ALLOW_TOP_LEVEL_AWAIT)
    result = eval(compiled, namespace)
    if inspect.iscoroutine(result):
        asyncio.run(result)


def skill_folders(root: Path) -> None:
    """What the skills block reads from its working directory."""
    (root / "my-skill").mkdir()
    (root / "my-skill" / "SKILL.md").write_text(
        "---\nname: my-skill\ndescription: A custom skill\n---\n# Instructions\n"
    )
    (root / "skills" / "charts").mkdir(parents=True)
    (root / "skills" / "charts" / "SKILL.md").write_text(
        "---\nname: charts\ndescription: Draw charts\n---\nUse matplotlib.\n"
    )
    (root / "skills" / "my-skill").mkdir()
    (root / "skills" / "my-skill" / "SKILL.md").write_text(
        (root / "my-skill" / "SKILL.md").read_text()
    )


@pytest.mark.parametrize("name", list(SCENARIOS))
def test_readme_block_runs(
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    run_scenario(name, SCENARIOS[name], README, FIXUPS, monkeypatch, capsys, tmp_path)


def run_scenario(
    name: str,
    scenario: Scenario,
    readme: Path,
    fixups: dict[str, list[tuple[str, str]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
) -> None:
    """Run the block of *readme* that *scenario* claims, renamed and patched, and check it
    (shared by the README of each upstream generation)."""
    original = block_for(scenario, readme)
    code = original.replace("cave_agent", "cave_tui")
    for old, new in fixups.get(name, []):
        assert old in code, f"README fix-up no longer needed? {old!r} is gone"
        code = code.replace(old, new)

    run = ExampleRun()
    model = ConversationModel(scenario.turns)
    if scenario.scripted:
        substitute_models(monkeypatch, model, run)
    else:  # real model classes, recorded (building one sends nothing)
        import cave_tui.models as models

        real = models.LiteLLMModel

        def build(*args: Any, **kwargs: Any) -> Any:
            run.built.append(("LiteLLMModel", args, kwargs))
            return real(*args, **kwargs)

        monkeypatch.setattr(models, "LiteLLMModel", build)
    record_agents(monkeypatch, run)
    if scenario.in_tmp_dir:
        skill_folders(tmp_path)
        monkeypatch.chdir(tmp_path)

    namespace: dict[str, Any] = {"__name__": "__main__", "MODEL": model}
    if name == "injection_module":
        run_injection_block(code, tmp_path, model)
    else:
        exec(compile(scenario.prelude, f"<prelude of {name}>", "exec"), namespace)
        run_block(code, namespace)
    scenario.check(namespace, run, capsys.readouterr().out)


def run_injection_block(code: str, root: Path, model: ConversationModel) -> None:
    """The injection-module block is a skill's `injection.py`: load it as one and use it."""
    from cave_tui import CaveAgent
    from cave_tui.skills import SkillDiscovery

    folder = root / "stats"
    folder.mkdir()
    (folder / "SKILL.md").write_text("---\nname: stats\ndescription: Statistics\n---\nUse it.\n")
    (folder / "injection.py").write_text(code)
    skill = SkillDiscovery.from_file(folder / "SKILL.md")
    agent = CaveAgent(model, skills=[skill], display=False)
    asyncio.run(agent.run("Analyze [1, 2, 3] with the stats skill"))
