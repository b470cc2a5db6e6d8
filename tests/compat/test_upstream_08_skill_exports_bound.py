"""A skill's exports given in code are bound when the agent is built, as upstream 0.8 binds
them, but hidden: neither described nor listed (the model's namespace listing, the user's,
session dumps) until the model activates the skill. A name already bound refuses the agent
(ValueError) and binds nothing. In a kernel, `activate_skill` run on the runtime alone gives
the instructions back and the helpers work. An `injection.py` not yet imported stays
unimported (cave's progressive disclosure: tests/skills/test_activation.py)."""

from __future__ import annotations

import pytest

from cave_tui import CaveAgent
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Function, IPyKernelRuntime, IPythonRuntime, Type, Variable
from cave_tui.skills import Skill


def double(x: int) -> int:
    """Twice x."""
    return x * 2


class Point:
    pass


def make_skill() -> Skill:
    return Skill(
        name="maths",
        description="Doubling. Use for sums.",
        body_content="# Maths\nUse double(x).",
        functions=[Function(double)],
        variables=[Variable("FACTOR", 2, "the factor")],
        types=[Type(Point)],
    )


def listed(rows: list) -> set[str]:
    return {row.name for row in rows}


async def test_exports_bound_at_construction_are_hidden_until_activation() -> None:
    model = ScriptedModel(
        [
            "```python\nactivate_skill('maths')\n```",
            "```python\nprint(double(21))\n```",
            "42",
        ]
    )
    runtime = IPythonRuntime()
    agent = CaveAgent(model, runtime=runtime, skills=[make_skill()], display=False)

    # Bound: a cell uses it before any activation (0.8's promise).
    result = await runtime.execute("print(double(5), FACTOR, Point.__name__)")
    assert result.success and result.stdout.strip() == "10 2 Point"
    # Hidden: no listing, no description, no prompt names them yet (cave's promise).
    for rows in (await runtime.namespace_listing(), await runtime.namespace_summary()):
        assert not listed(rows) & {"double", "FACTOR", "Point"}
    assert {p.name for p in await runtime.persistable()} & {"double", "FACTOR"} == set()
    assert "double" not in runtime.describe_functions()
    first = "\n".join(m["content"] for m in await agent.build_request())
    assert "double" not in first and "FACTOR" not in first

    await agent.run("double 21")

    # Activated: listed and described with their descriptions.
    assert {"double", "FACTOR", "Point"} <= listed(await runtime.namespace_listing())
    assert "double" in runtime.describe_functions()
    namespace = model.requests[1][-1]["content"].split("Namespace (live):", 1)[1]
    assert "double(x: int) -> int # Twice x." in namespace
    assert "42" in model.requests[2][-1]["content"]


def test_a_taken_name_refuses_the_agent_and_binds_nothing() -> None:
    def leaked() -> str:
        return "never bound"

    colliding = Skill(
        name="broken",
        description="Two exports, one name.",
        functions=[Function(leaked)],
        variables=[Variable("leaked", 1)],
    )
    runtime = IPythonRuntime()
    with pytest.raises(ValueError, match="already exists"):
        CaveAgent(ScriptedModel(["x"]), runtime=runtime, skills=[colliding], display=False)
    assert "leaked" not in runtime.injected

    taken = IPythonRuntime(variables=[Variable("double", "the user's")])
    with pytest.raises(ValueError, match="already exists"):
        CaveAgent(ScriptedModel(["x"]), runtime=taken, skills=[make_skill()], display=False)
    assert taken.injected["double"].value == "the user's"
    assert "FACTOR" not in taken.injected


async def test_a_second_agent_on_the_runtime_reuses_the_bindings() -> None:
    runtime = IPythonRuntime()
    skill = make_skill()
    CaveAgent(ScriptedModel(["x"]), runtime=runtime, skills=[skill], display=False)
    CaveAgent(ScriptedModel(["x"]), runtime=runtime, skills=[skill], display=False)
    assert (await runtime.execute("print(double(2))")).stdout.strip() == "4"


async def test_kernel_activation_on_the_runtime_alone() -> None:
    runtime = IPyKernelRuntime()
    CaveAgent(ScriptedModel(["x"]), runtime=runtime, skills=[make_skill()], display=False)
    try:
        assert not listed(await runtime.namespace_listing()) & {"double", "FACTOR", "Point"}
        result = await runtime.execute("note = activate_skill('maths')\nprint(note)")
        assert result.success and "Use double(x)." in result.stdout
        result = await runtime.execute("note")  # a bare value shows the pointer
        assert "instructions of skill 'maths'" in result.stdout
        result = await runtime.execute("print(double(5) * FACTOR)")
        assert result.success and result.stdout.strip() == "20"
        await runtime.reset()
        assert (await runtime.execute("print(double(1))")).stdout.strip() == "2"
    finally:
        await runtime.stop()
