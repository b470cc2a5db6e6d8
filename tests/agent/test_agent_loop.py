"""End-to-end runs of the loop with ScriptedModel and a real IPython runtime."""

import asyncio

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.agent import events as ev
from cave_tui.agent.streaming import OUTPUT_RECOVERY_PROMPT
from cave_tui.models import ScriptedModel, ScriptExhaustedError
from cave_tui.models.base import ContextOverflowError
from cave_tui.runtime import Function, IPythonRuntime, Variable


def double(x: int) -> int:
    """Return x doubled."""
    return x * 2


async def test_end_to_end_inject_transform_retrieve():
    runtime = IPythonRuntime(
        variables=[Variable("numbers", [5, 3, 8, 1], "numbers to transform")],
        functions=[Function(double)],
    )
    model = ScriptedModel(
        [
            "First a look.\n```python\nprint(numbers)\n```",
            "```python\nresult = sorted(double(n) for n in numbers)\n```",
            "Done: `result` holds the doubled numbers in order.",
        ]
    )
    agent = CaveAgent(model, runtime=runtime)
    response = await agent.run("Double the numbers, sorted, into result")
    assert response.status is AgentStatus.COMPLETED
    assert response.steps == 3
    assert response.code_snippets == [
        "print(numbers)",
        "result = sorted(double(n) for n in numbers)",
    ]
    assert await runtime.retrieve("result") == [2, 6, 10, 16]
    # The first request describes the injected objects.
    first = model.requests[0][-1]["content"]
    assert "double(x: int) -> int" in first and "Return x doubled." in first
    assert "numbers: list len 4 = [5, 3, 8, 1]" in first
    # The second request saw the printed output...
    assert "[5, 3, 8, 1]" in model.requests[1][-1]["content"]
    # ...and the third describes `result` live: its type and length.
    third = model.requests[2][-1]["content"]
    assert "result: list len 4 = [2, 6, 10, 16]" in third
    # Usage is the sum of the three calls, deterministic.
    assert response.usage.model_calls == 3
    assert (
        response.usage.total_tokens
        == response.usage.prompt_tokens + response.usage.completion_tokens
    )
    assert response.usage.prompt_tokens > 0


async def test_second_request_describes_variable_made_in_first_step():
    runtime = IPythonRuntime(
        variables=[Variable("numbers", [5, 3, 8, 1])], functions=[Function(double)]
    )
    model = ScriptedModel(["```python\nresult = [double(n) for n in numbers]\n```", "ok"])
    await CaveAgent(model, runtime=runtime).run("go")
    second = model.requests[1][-1]["content"]
    assert "result: list len 4" in second


async def test_history_persists_across_runs_and_prefix_is_stable():
    model = ScriptedModel(
        ["```python\nx = 41\n```", "set", "```python\nx += 1\nprint(x)\n```", "42"]
    )
    agent = CaveAgent(model)
    await agent.run("set x")
    response = await agent.run("increment x")
    assert response.content == "42"
    assert await agent.runtime.retrieve("x") == 42
    # Stable prefix: system prompt identical, earlier messages unchanged.
    r1, r3 = model.requests[1], model.requests[3]
    assert r1[0] == r3[0]
    assert r3[1]["content"] == "set x"
    assert r1[1] == r3[1] and r1[2] == r3[2]


async def test_max_steps_reached():
    model = ScriptedModel(["```python\nprint(1)\n```"] * 3)
    response = await CaveAgent(model, max_steps=3).run("loop")
    assert response.status is AgentStatus.MAX_STEPS_REACHED
    assert response.steps == 3


async def test_provider_error_ends_run_and_conversation_stays_usable():
    model = ScriptedModel([ContextOverflowError("prompt too long"), "recovered"])
    agent = CaveAgent(model, context_window=None)  # no compaction to recover with
    response = await agent.run("first")
    assert response.status is AgentStatus.ERROR and "too long" in response.content
    response = await agent.run("second")
    assert response.status is AgentStatus.COMPLETED
    roles = [m["role"] for m in model.requests[1]]
    assert roles == ["system", "user"]  # merged consecutive user turns
    assert (
        "first" in model.requests[1][1]["content"] and "second" in model.requests[1][1]["content"]
    )


async def test_script_exhausted_is_a_clear_error():
    model = ScriptedModel(["```python\nx = 1\n```"])
    response = await CaveAgent(model).run("go")
    assert response.status is AgentStatus.ERROR
    assert "ran out of replies" in response.content
    with pytest.raises(ScriptExhaustedError):
        await model.complete([{"role": "user", "content": "x"}])


async def test_truncated_reply_is_continued():
    model = ScriptedModel(
        [
            {"text": "```python\nvalue = 1", "finish_reason": "length"},
            {"text": "0 + 5\n```", "finish_reason": "stop"},
            "value is 15",
        ]
    )
    agent = CaveAgent(model)
    events = [e async for e in agent.stream_events("compute")]
    assert await agent.runtime.retrieve("value") == 15
    assert any(e.type is EventType.NOTICE and "continuing" in e.content for e in events)
    # as upstream (0.7.3 and 0.8): the cut part and the resume prompt stay in the history
    assert model.requests[1][-1]["content"].endswith(OUTPUT_RECOVERY_PROMPT)
    assert [m["content"] for m in agent.history[1:4]] == [
        "```python\nvalue = 1",
        OUTPUT_RECOVERY_PROMPT,
        "0 + 5\n```",
    ]


async def test_events_are_typed_with_steps_and_chunked_text():
    long_text = "word " * 200
    model = ScriptedModel(["```python\nprint('hi')\n```", long_text])
    events = [e async for e in CaveAgent(model).stream_events("go")]
    kinds = [e.type for e in events]
    assert kinds[0] is EventType.USER
    assert EventType.CODE in kinds and EventType.EXECUTION_OUTPUT in kinds
    assert kinds[-2:] == [EventType.FINAL_RESPONSE, EventType.STOPPED]
    text_events = [e for e in events if e.type is EventType.TEXT and e.step == 2]
    assert 1 < len(text_events) < 200  # chunks, not one event per character or word
    assert "".join(e.content for e in text_events) == long_text
    assert all(isinstance(e, ev.Event) and e.step >= 0 for e in events)
    usage = [e for e in events if e.type is EventType.USAGE]
    assert (len(usage) == 2 and usage[1].run_prompt_tokens == 0) or usage[1].prompt_tokens > 0
    for e in events:
        assert e.to_dict()["type"] == e.type.value


async def test_exec_timeout_reported_to_model():
    model = ScriptedModel(["```python\nwhile True: pass\n```", "it hung"])
    agent = CaveAgent(model, max_exec_timeout=0.3)
    response = await agent.run("spin")
    assert response.status is AgentStatus.COMPLETED
    assert "timed out" in model.requests[1][-1]["content"]


async def test_cancelling_a_run_leaves_agent_usable():
    model = ScriptedModel(
        ["```python\nwhile True: pass\n```", "```python\nprint('again')\n```", "fine"]
    )
    agent = CaveAgent(model)
    task = asyncio.create_task(agent.run("spin"))
    await asyncio.sleep(0.5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    response = await agent.run("go on")
    assert response.status is AgentStatus.COMPLETED
    assert "interrupted" in model.requests[1][-2]["content"] or any(
        "interrupted" in m["content"] for m in model.requests[1]
    )


async def test_upstream_style_template_gets_inline_namespace():
    template = (
        "{instructions}\n<functions>\n{functions}\n</functions>\n"
        "<variables>\n{variables}\n</variables>"
    )
    runtime = IPythonRuntime(variables=[Variable("data", [1, 2])], functions=[Function(double)])
    model = ScriptedModel(["done"])
    await CaveAgent(model, runtime, system_prompt_template=template).run("x")
    system = model.requests[0][0]["content"]
    assert "<functions>\n- double(x: int)" in system and "- data: list len 2" in system


async def test_upstream_messages_param_accepts_objects():
    class Msg:
        def __init__(self, role, content):
            self.role, self.content = role, content

    model = ScriptedModel(["ok"])
    agent = CaveAgent(
        model, messages=[Msg("system", "old"), Msg("user", "hi"), Msg("assistant", "hello")]
    )
    await agent.run("again")
    roles = [m["role"] for m in model.requests[0]]
    assert roles == ["system", "user", "assistant", "user"]


async def test_display_renders_without_error(capsys):
    model = ScriptedModel(["```python\nprint('shown')\n```", "**bold** answer"])
    await CaveAgent(model, display=True).run("go")
    out = capsys.readouterr().out
    assert "shown" in out and "bold answer" in out and "completed" in out
