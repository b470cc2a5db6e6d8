"""Sub-agent events in the parent's stream: live, ordered, tagged; shared runtimes."""

from __future__ import annotations

import threading

import pytest
from rich.console import Console

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.agent.display import RichDisplay
from cave_tui.models import ScriptedModel
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.models.openai_http import OpenAIHTTPModel
from cave_tui.runtime import IPythonRuntime, Variable
from tests.helpers.openai_server import ScriptedOpenAIServer


async def test_events_arrive_while_the_parent_cell_is_still_running():
    gate = threading.Event()
    child = CaveAgent(
        ScriptedModel(
            ["```python\nprint('released' if gate.wait(10) else 'not forwarded live')\n```", "ok"]
        ),
        runtime=IPythonRuntime(variables=[Variable("gate", gate)]),
        name="worker",
    )
    parent = CaveAgent(
        ScriptedModel(["```python\nr = await worker.run('wait for the gate')\n```", "done"]),
        runtime=IPythonRuntime(variables=[Variable("worker", child)]),
    )
    seen = []
    async for event in parent.stream_events("go"):
        seen.append((event.agent, event.type))
        if event.agent == "worker" and event.type is EventType.CODE:
            # The worker's cell is blocked on the gate: only a live event can open it.
            gate.set()
    assert "released" in child.history[2]["content"]
    assert seen[-2] == (None, EventType.FINAL_RESPONSE)


async def test_nested_agents_are_tagged_with_their_path():
    inner = CaveAgent(
        ScriptedModel(["```python\nx = 1\n```", "inner done"]), name="inner", runtime=None
    )
    middle = CaveAgent(
        ScriptedModel(["```python\nr = await inner.run('set x')\n```", "middle done"]),
        runtime=IPythonRuntime(variables=[Variable("inner", inner)]),
    )
    outer = CaveAgent(
        ScriptedModel(["```python\nr = await middle.run('delegate')\n```", "outer done"]),
        runtime=IPythonRuntime(variables=[Variable("middle", middle)]),
        name="boss",
    )
    events = [e async for e in outer.stream_events("go")]
    finals = [(e.agent, e.content) for e in events if e.type is EventType.FINAL_RESPONSE]
    assert finals == [
        ("middle/inner", "inner done"),
        ("middle", "middle done"),
        ("boss", "outer done"),
    ]
    # The middle agent's own stream (had it been consumed directly) is not affected:
    assert middle.history[-1]["content"] == "middle done"


async def test_events_are_not_forwarded_when_the_child_runs_on_its_own():
    child = CaveAgent(ScriptedModel(["alone", "with parent"]), name="kid")
    parent = CaveAgent(
        ScriptedModel(["```python\nr = await kid.run('b')\n```", "ok"]),
        runtime=IPythonRuntime(variables=[Variable("kid", child)]),
    )
    await child.run("a")  # driven by the host, not by a parent cell
    events = [e async for e in parent.stream_events("go")]
    kid_users = [e.content for e in events if e.agent == "kid" and e.type is EventType.USER]
    assert kid_users == ["b"]


async def test_shared_runtime_on_purpose():
    shared = IPythonRuntime(variables=[Variable("data", [3, None, 1])])
    helper = CaveAgent(
        ScriptedModel(
            [
                "```python\nclean = sorted(x for x in data if x is not None)\n```",
                "cleaned",
                "```python\nimport asyncio\nawait asyncio.sleep(0)\ntotal = sum(clean)\n```",
                "summed",
            ]
        ),
        runtime=shared,
        name="helper",
    )
    boss = CaveAgent(
        ScriptedModel(
            [
                # From inside the boss's own cell, on the same runtime: runs inline.
                "```python\nr = await helper.run('clean data')\nprint(clean)\n```",
                "```python\nr = helper.run_sync('sum it')\nprint(total)\n```",
                "total is 4",
            ]
        ),
        runtime=shared,
    )
    shared.inject(Variable("helper", helper, "helper sharing this runtime"))
    events = [e async for e in boss.stream_events("clean and sum")]
    assert events[-1].content == "total is 4"
    assert "[1, 3]" in boss.history[2]["content"] and "4" in boss.history[4]["content"]
    assert await shared.retrieve("total") == 4  # one namespace, seen by both
    helper_outputs = [
        e for e in events if e.agent == "helper" and e.type is EventType.EXECUTION_OUTPUT
    ]
    assert [e.changed for e in helper_outputs] == [["clean"], ["asyncio", "total"]]
    # Driven by the host one after the other, sharing works as well.
    assert (await helper.run("again")).status is AgentStatus.ERROR  # script exhausted
    assert await shared.retrieve("clean") == [1, 3]


async def test_display_shows_who_is_acting():
    child = CaveAgent(ScriptedModel(["```python\ny = 2\n```", "child says hi"]), name="kid")
    parent = CaveAgent(
        ScriptedModel(["```python\nr = await kid.run('hi')\n```", "parent done"]),
        runtime=IPythonRuntime(variables=[Variable("kid", child)]),
    )
    console = Console(record=True, width=100, color_system=None)
    display = RichDisplay(console)
    async for event in parent.stream_events("go"):
        display.render(event)
    text = console.export_text()
    assert "[kid] › hi" in text and "[kid] step 1" in text
    lines = [line.rstrip() for line in text.splitlines()]
    assert lines[lines.index("child says hi") - 1] == "[kid]"
    assert lines[-1] == "parent done" and lines[-2] != "[kid]"


@pytest.mark.parametrize("client", [LiteLLMModel, OpenAIHTTPModel], ids=["litellm", "light"])
async def test_one_litellm_model_shared_across_event_loops(client):
    usage = {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}
    with ScriptedOpenAIServer() as server:
        replies = [
            "```python\nr = await sub.run('a')\nprint(r.content)\n```",  # parent, main loop
            "sub answer A",  # sub, on the parent's runtime worker loop
            "```python\nr = sub.run_sync('b')\nprint(r.content)\n```",
            "sub answer B",  # sub, in a fresh loop inside the cell
            "parent done",
        ]
        server.script.extend(("reply", text, "stop", usage) for text in replies)
        model = client("openai/test", api_key="k", api_base=server.base_url, max_retries=0)
        sub = CaveAgent(model, name="sub")
        parent = CaveAgent(model, runtime=IPythonRuntime(variables=[Variable("sub", sub)]))
        response = await parent.run("delegate twice")
    assert response.status is AgentStatus.COMPLETED, response.error
    assert "sub answer A" in parent.history[2]["content"]
    assert "sub answer B" in parent.history[4]["content"]
    assert sub.usage.model_calls == 2 and parent.usage.model_calls == 3


async def test_cancelling_the_parent_interrupts_the_cell_and_keeps_history_valid():
    import asyncio

    busy = "```python\nimport time\nwhile True:\n    time.sleep(0.02)\n```"
    child_model = ScriptedModel([busy, "after the interruption"])
    child = CaveAgent(child_model, name="c")
    parent = CaveAgent(
        ScriptedModel(["```python\nr = await c.run('sleep')\n```", "ok"]),
        runtime=IPythonRuntime(variables=[Variable("c", child)]),
    )
    seen = []

    async def consume() -> None:
        async for event in parent.stream_events("go"):
            seen.append((event.agent, event.type))

    task = asyncio.create_task(consume())
    while ("c", EventType.CODE) not in seen:
        await asyncio.sleep(0.02)
    task.cancel()
    try:
        await asyncio.wait_for(task, 10)
    except asyncio.CancelledError:
        pass
    # The cell's observation, then upstream 0.8's interruption marker.
    assert parent.history[-2] == {"role": "user", "content": "Execution interrupted by the user."}
    assert parent.history[-1] == {"role": "user", "content": "[Request interrupted by user]"}
    # The child's turn ended with its cell: its model was not asked again (issue 31.10).
    assert len(child_model.requests) == 1
    # Both runtimes are usable again right away, and so is the sub-agent.
    result = await parent.runtime.execute("z = 3")
    assert result.success and await parent.runtime.retrieve("z") == 3
    assert (await child.runtime.execute("v = 4")).success
    again = await parent.runtime.execute("r = await c.run('go on')\nprint(r.content)")
    assert again.success and again.output.strip() == "after the interruption", again
    roles = [m["role"] for m in child.history]
    assert roles[-2:] == ["user", "assistant"]


async def test_a_stopped_turn_ends_with_its_cell_without_asking_the_model_again():
    """The race of issue 31.10, made certain: the cell is interrupted and the turn has all the
    time it wants to ask its model again; `stop_turn()` ends it with the cell."""
    import asyncio

    busy = "```python\nimport time\nwhile True:\n    time.sleep(0.02)\n```"
    model = ScriptedModel([busy, "after the interruption"])
    agent = CaveAgent(model, name="c", display=False)
    seen: list[EventType] = []

    async def consume():
        async for event in agent.stream_events("sleep"):
            seen.append(event.type)

    task = asyncio.create_task(consume())
    while EventType.CODE not in seen:
        await asyncio.sleep(0.02)
    assert await agent.stop(grace=10)  # the cell may not have started yet: caught when it has
    await asyncio.wait_for(task, 10)
    assert seen[-2] is EventType.CANCELLED, seen
    assert len(model.requests) == 1  # the reply meant for the next turn is still there
    assert agent.history[-1]["role"] == "user"
    response = await agent.run("go on")
    assert response.content == "after the interruption"
    assert response.status is AgentStatus.COMPLETED
