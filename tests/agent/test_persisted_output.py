"""Output over `max_exec_output` is kept whole in the namespace as `_output_N` (upstream
0.8's persisted outputs): the model reads upstream's `<persisted-output>` marker with a
preview and opens the value; the user sees it in the namespace listing."""

from __future__ import annotations

import pytest

from cave_tui.agent import CaveAgent
from cave_tui.events import ExecutionResultEvent
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime

LONG = "```python\nprint('\\n'.join(f'line {i}' for i in range(1000)))\n```"
TEXT = "\n".join(f"line {i}" for i in range(1000))


def fence(code: str) -> str:
    return f"```python\n{code}\n```"


async def test_long_output_is_kept_as_a_value_the_model_and_user_open() -> None:
    model = ScriptedModel([LONG, fence("print(len(_output_1))"), LONG, "done"])
    runtime = IPythonRuntime()
    agent = CaveAgent(model, runtime=runtime, display=False)
    events = [e async for e in agent.stream_events("print a lot")]

    observation = model.requests[1][-1]["content"]
    assert "<persisted-output>\nOutput too large (" in observation
    assert "The full text is in the runtime variable `_output_1` (a str)." in observation
    assert "Preview (first " in observation and "line 0\nline 1\n" in observation
    assert "line 999" not in observation  # the preview is the head only
    assert await runtime.retrieve("_output_1") == TEXT + "\n"  # whole, as printed
    assert str(len(TEXT) + 1) in model.requests[2][-1]["content"]  # the model opened it

    results = [e for e in events if isinstance(e, ExecutionResultEvent)]
    assert [r.persisted_variable for r in results] == ["_output_1", None, "_output_2"]
    assert results[0].persisted and results[0].output.rstrip("\n") == TEXT  # shown whole
    listed = {row.name for row in await runtime.namespace_summary()}
    assert {"_output_1", "_output_2"} <= listed  # the inspector lists them
    assert "_output_1" not in runtime.describe_variables()  # never described in the prompt


async def test_a_resumed_conversation_never_reuses_a_name_it_gave_out() -> None:
    model = ScriptedModel([LONG, "done"])
    agent = CaveAgent(model, display=False)
    agent.conversation.add_observation(
        "<persisted-output>\nOutput too large (9000 chars) to inline. "
        "The full text is in the runtime variable `_output_5` (a str). ..."
    )
    events = [e async for e in agent.stream_events("again")]
    (result,) = [e for e in events if isinstance(e, ExecutionResultEvent)]
    assert result.persisted_variable == "_output_6"


async def test_prefix_preview_and_short_output() -> None:
    model = ScriptedModel([LONG, fence("print('short')"), "done"])
    agent = CaveAgent(
        model, display=False, persisted_output_prefix="big", exec_output_preview_chars=0
    )
    events = [e async for e in agent.stream_events("go")]
    observation = model.requests[1][-1]["content"]
    assert "`big_1`" in observation and "Preview" not in observation
    assert (agent.persisted_output_prefix, agent.exec_output_preview_chars) == ("big", 0)
    results = [e for e in events if isinstance(e, ExecutionResultEvent)]
    assert [r.persisted for r in results] == [True, False]
    assert "short" in model.requests[2][-1]["content"]


def test_a_prefix_that_names_nothing_is_refused() -> None:
    with pytest.raises(ValueError, match=r"persisted_output_prefix .* Python identifier"):
        CaveAgent(ScriptedModel(["done"]), persisted_output_prefix="not a name")


def test_a_marker_number_too_long_to_be_an_index_is_ignored() -> None:
    from cave_tui.agent.persisted_output import highest_persisted_index, persist_marker

    huge = persist_marker("x", 0, "_output_" + "9" * 5000)  # past int()'s digit limit
    assert highest_persisted_index([huge, persist_marker("y", 0, "_output_3")], "_output") == 3


async def test_clearing_an_old_result_keeps_the_name_of_its_kept_output() -> None:
    from cave_tui.agent.compaction import CLEARED, Compactor

    model = ScriptedModel([LONG, *(fence(f"x{i} = {i}") for i in range(5)), "done"])
    agent = CaveAgent(model, display=False)
    await agent.run("go")
    compactor = Compactor(agent, 100_000)
    history, _, cleared = compactor._clear_old_results(list(agent.history), keep=1)
    assert cleared >= 1
    (first,) = [m for m in history if "_output_1" in str(m["content"])]
    content = str(first["content"])
    assert content.startswith(CLEARED) and "line 0" not in content  # the preview went
    assert "The full text is in the runtime variable `_output_1` (a str)." in content
