"""Activation: progressive disclosure, injection at activation, bodies delivered whole."""

from __future__ import annotations

import dill
import pytest

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Function, IPythonRuntime, Variable
from cave_tui.skills import Skill, SkillDiscovery, SkillError

INJECTION = '''
import os
from dataclasses import dataclass
from pathlib import Path

from cave_tui.runtime import Function, Type, Variable

# A side effect that proves when this module was imported.
Path(os.environ["SKILL_MARKER"]).write_text("imported")


def celsius(f: float) -> float:
    """Fahrenheit to Celsius."""
    return round((f - 32) * 5 / 9, 2)


@dataclass
class Reading:
    place: str
    temp: float


UNITS = {"temp": "C"}

__exports__ = [
    Function(celsius, description="Convert a Fahrenheit reading"),
    Variable("UNITS", UNITS, "Units used by the weather helpers"),
    Type(Reading, description="One temperature reading"),
]
'''

BODY = "# Weather\nConvert readings with celsius(f). Report units from UNITS."


@pytest.fixture
def weather(make_skill, tmp_path, monkeypatch):
    marker = tmp_path / "imported.txt"
    monkeypatch.setenv("SKILL_MARKER", str(marker))
    path = make_skill(
        "weather",
        description="Temperature helpers. Use for weather data.",
        body=BODY,
        injection=INJECTION,
    )
    return SkillDiscovery.from_file(path), marker


async def test_progressive_disclosure_and_injection_at_activation(weather):
    skill, marker = weather
    model = ScriptedModel(
        [
            "Let me load the skill.\n```python\nactivate_skill('weather')\n```",
            "```python\nnow = celsius(212)\nr = Reading('here', now)\nprint(now, UNITS)\n```",
            "It is 100.0 C.",
        ]
    )
    runtime = IPythonRuntime()
    agent = CaveAgent(model, runtime=runtime, skills=[skill])
    assert not marker.exists(), "injection.py ran at discovery or install"
    first = await agent.build_request()
    assert not marker.exists()
    system = first[0]["content"]
    assert "- weather: Temperature helpers. Use for weather data." in system
    assert "activate_skill(name)" in system
    request_text = "\n".join(m["content"] for m in first)
    assert "Convert readings" not in request_text  # the body is not disclosed yet
    assert "celsius" not in request_text and "activate_skill" not in first[-1]["content"]

    response = await agent.run("How hot is 212 F?")
    assert response.status is AgentStatus.COMPLETED
    assert marker.read_text() == "imported"
    # The next prompt has the body, in full, and the exports with their descriptions.
    second = model.requests[1]
    observation = second[-1]["content"]
    assert BODY in observation
    assert "Added to the namespace: celsius(), UNITS, Reading" in observation
    namespace = observation.split("Namespace (live):", 1)[1]
    assert "celsius(f: float) -> float # Convert a Fahrenheit reading" in namespace
    assert "UNITS: dict len 1 = {'temp': 'C'} # Units used by the weather helpers" in namespace
    assert (
        "- Reading: dataclass fields: place: str, temp: float # One temperature reading"
        in namespace
    )
    assert "activate_skill" not in namespace  # usable, but not listed
    # The exports can be retrieved, and the code that used them worked.
    assert (await runtime.retrieve("celsius"))(32) == 0
    assert await runtime.retrieve("UNITS") == {"temp": "C"}
    assert callable(await runtime.retrieve("activate_skill"))
    assert "100.0 {'temp': 'C'}" in model.requests[2][-1]["content"]
    assert (await runtime.retrieve("r")).temp == 100.0


async def test_body_longer_than_output_limit_is_delivered_whole(make_skill):
    lines = [f"Rule {i}: check the column {i} before using it." for i in range(600)]
    body = "# Big\n" + "\n".join(lines) + "\nLAST-LINE-OF-THE-BODY"
    skill = SkillDiscovery.from_file(make_skill("big", body=body))
    assert len(body) > 20_000
    model = ScriptedModel(
        [
            "```python\nprint('x' * 3000)\nprint(activate_skill('big'))\nprint('y' * 3000)\n```",
            "```python\nprint(activate_skill('big'))\n```",
            "done",
        ]
    )
    agent = CaveAgent(model, skills=[skill], max_exec_output=500)
    events = [e async for e in agent.stream_events("load it")]
    observation = model.requests[1][-1]["content"]
    assert observation.count(body) == 1  # whole, once
    assert "<persisted-output>" in observation  # the x/y noise was kept aside (`_output_1`)
    assert observation.index("</persisted-output>") < observation.index(body)
    outputs = [e for e in events if e.type is EventType.EXECUTION_OUTPUT]
    assert body in outputs[0].content
    # Asked again: not repeated, the model is told it is already there.
    again = model.requests[2][-1]["content"]
    assert body not in again and "already active" in again


async def test_bare_call_shows_a_pointer_not_a_cut_copy(make_skill):
    body = "Step one.\n" * 400
    skill = SkillDiscovery.from_file(make_skill("steps", body=body.strip()))
    model = ScriptedModel(["```python\nactivate_skill('steps')\n```", "ok"])
    agent = CaveAgent(model, skills=[skill], max_exec_output=300)
    await agent.run("go")
    observation = model.requests[1][-1]["content"]
    assert "[instructions of skill 'steps': see the full text after this output]" in observation
    assert observation.count(body.strip()) == 1
    assert "elided" not in observation


async def test_unknown_skill_and_broken_injection_are_clear_errors(make_skill):
    broken = SkillDiscovery.from_file(
        make_skill("broken", injection="import not_a_real_module_xyz\n__exports__ = []\n")
    )
    no_exports = SkillDiscovery.from_file(make_skill("empty", injection="x = 1\n"))
    model = ScriptedModel(
        [
            "```python\nactivate_skill('nope')\n```",
            "```python\nactivate_skill('broken')\n```",
            "```python\nactivate_skill('empty')\n```",
            "gave up",
        ]
    )
    agent = CaveAgent(model, skills=[broken, no_exports])
    await agent.run("go")
    first = model.requests[1][-1]["content"]
    assert "SkillNotFoundError: no skill named 'nope'; available skills: broken, empty" in first
    second = model.requests[2][-1]["content"]
    assert "broken/injection.py: failed to import: ModuleNotFoundError" in second
    third = model.requests[3][-1]["content"]
    assert "empty/injection.py: defines no __exports__" in third


async def test_skill_defined_in_code_and_by_path(make_skill):
    def shout(text: str) -> str:
        """Upper-case text."""
        return text.upper() + "!"

    coded = Skill(
        name="loud",
        description="Make text loud.",
        body_content="Call shout(text).",
        functions=[Function(shout)],
        variables=[Variable("VOLUME", 11, "How loud")],
    )
    path = make_skill("plain", body="Plain instructions.")
    model = ScriptedModel(
        [
            "```python\nactivate_skill('loud')\nactivate_skill('plain')\nprint(shout('hi'))\n```",
            "HI!",
        ]
    )
    agent = CaveAgent(model, skills=[coded, str(path.parent)])
    await agent.run("shout")
    observation = model.requests[1][-1]["content"]
    assert "HI!" in observation
    assert "Call shout(text)." in observation and "Plain instructions." in observation
    assert "VOLUME: int = 11 # How loud" in observation
    with pytest.raises(SkillError, match="two skills are named 'loud'"):
        CaveAgent(ScriptedModel([]), skills=[coded, coded])
    with pytest.raises(TypeError, match="skills= takes Skill objects or paths"):
        CaveAgent(ScriptedModel([]), skills=[42])


async def test_reset_keeps_activated_exports(weather):
    skill, _ = weather
    model = ScriptedModel(["```python\nactivate_skill('weather')\n```", "ok"])
    runtime = IPythonRuntime()
    agent = CaveAgent(model, runtime=runtime, skills=[skill])
    await agent.run("load")
    await runtime.reset()
    assert (await runtime.retrieve("celsius"))(50) == 10.0
    assert callable(await runtime.retrieve("activate_skill"))


class IsolatedRuntime(IPythonRuntime):
    """Stands in for a process-isolated runtime: values cross a dill boundary."""

    in_process = False

    def inject(self, item):  # type: ignore[no-untyped-def]
        value = dill.loads(dill.dumps(item.value))
        copy = type(item).__new__(type(item))
        copy.__dict__.update(item.__dict__)
        if hasattr(copy, "func"):
            copy.func = value
        else:
            copy.value = value
        super().inject(copy)


async def test_isolated_runtime_activates_through_the_sentinel(weather):
    skill, marker = weather
    model = ScriptedModel(
        [
            "```python\nnote = activate_skill('weather')\nprint(note)\n```",
            "```python\nprint(celsius(41))\n```",
            "5.0",
        ]
    )
    runtime = IsolatedRuntime()
    agent = CaveAgent(model, runtime=runtime, skills=[skill])
    assert agent._skill_bridge.in_process is False
    await agent.run("convert")
    assert marker.exists()
    observation = model.requests[1][-1]["content"]
    assert BODY in observation
    assert "cave-skill" not in observation  # the sentinel line was consumed
    assert "usable from the next cell" in observation
    assert "5.0" in model.requests[2][-1]["content"]
