"""Upstream CaveAgent's documented agent API and defaults, under cave_tui."""

from __future__ import annotations

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, ExecutionStatus
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable

CODE = "```python\ntotal = sum(range(4))\nprint(total)\n```"


async def test_the_documented_defaults():
    agent = CaveAgent(ScriptedModel(["hi"]))
    assert agent.display is True  # Rich rendering to the terminal
    assert agent.context_window == 128_000 and agent.compactor is not None  # compaction on
    assert agent.max_steps == 10 and agent.max_exec_output == 5000
    assert agent.max_exec_timeout is None and agent.python_block_identifier == "python"
    await agent.runtime.stop()


async def test_run_renders_to_the_terminal_by_default(capsys):
    agent = CaveAgent(ScriptedModel([CODE, "The total is 6."]))
    response = await agent.run("add 0..3")
    shown = capsys.readouterr().out
    assert "total = sum(range(4))" in shown and "The total is 6." in shown
    quiet = CaveAgent(ScriptedModel(["ok"]), display=False)
    await quiet.run("anything")
    assert capsys.readouterr().out == ""
    assert response.content == "The total is 6."


async def test_the_response_has_upstreams_fields():
    agent = CaveAgent(ScriptedModel([CODE, "6"]), display=False, max_steps=4)
    response = await agent.run("add 0..3")
    assert response.status == ExecutionStatus.SUCCESS and response.status is AgentStatus.COMPLETED
    assert response.steps_taken == response.steps == 2 and response.max_steps == 4
    usage = response.token_usage
    assert usage.prompt_tokens > 0 and usage.total_tokens == usage.prompt_tokens + (
        usage.completion_tokens
    )
    assert [c.strip() for c in response.code_snippets] == ["total = sum(range(4))\nprint(total)"]


def test_build_system_prompt_guides_timeouts_only_when_there_is_one():
    plain = CaveAgent(ScriptedModel([]), display=False)
    assert "timeout" not in plain.build_system_prompt().lower()
    timed = CaveAgent(ScriptedModel([]), display=False, max_exec_timeout=30)
    prompt = timed.build_system_prompt()
    assert "30 seconds" in prompt and "timeout=" in prompt
    assert prompt == timed.system_prompt()


def test_messages_can_be_given_and_replaced():
    history = [{"role": "user", "content": "hello"}, {"role": "assistant", "content": "hi"}]
    agent = CaveAgent(ScriptedModel([]), display=False, messages=history)
    assert [m["role"] for m in agent.messages] == ["system", "user", "assistant"]
    agent.messages = [{"role": "system", "content": "old"}, {"role": "user", "content": "again"}]
    assert agent.messages[1:] == [{"role": "user", "content": "again"}]
    assert agent.messages[0]["content"] == agent.build_system_prompt()  # rebuilt, not kept


async def test_a_sub_agent_shown_by_its_parent_does_not_print_itself():
    child = CaveAgent(ScriptedModel(["child answer"]), name="child")  # display on, as default
    parent = CaveAgent(
        ScriptedModel(["```python\nr = await child.run('help')\nprint(r.content)\n```", "done"]),
        IPythonRuntime(variables=[Variable("child", child)]),
        display=False,
    )
    events = [e async for e in parent.stream_events("ask the child")]
    assert any(e.agent == "child" for e in events)  # forwarded into the parent's stream
    out = [e for e in events if e.type.value == "execution_output"]
    assert out and out[-1].output == "child answer\n"  # no Rich rendering in the cell's output
