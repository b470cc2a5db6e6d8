"""A reply cut by the output limit, as both upstream generations recover it: the cut part
and the resume prompt ("Output limit hit. Resume directly, ...") stay in the history, the
next part is parsed joined to it (a code block split across the cut runs whole), and the
continuation is one event that is cave's NoticeEvent (0.7's `event.type`) and 0.8's
`StatusEvent(OUTPUT_RECOVERY)`. A reply still cut after the last continuation is not an
answer: the run ends as a model error, its text kept (0.8)."""

from __future__ import annotations

from cave_tui import CaveAgent
from cave_tui.agent.events import EventType, NoticeEvent
from cave_tui.events import StatusEvent, StatusType, StopReason
from cave_tui.messages import AssistantMessage, UserMessage
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime


async def test_a_block_split_across_the_cut_runs_joined_and_the_history_keeps_the_cut() -> None:
    runtime = IPythonRuntime()
    model = ScriptedModel(
        [
            {"text": "Working...\n```python\nx = 4\nprint(", "finish_reason": "length"},
            {"text": "x + 1)\n```", "finish_reason": "stop"},
            "five",
        ]
    )
    agent = CaveAgent(model, runtime=runtime, display=False)

    events = [e async for e in agent.stream_events("q")]

    recoveries = [e for e in events if isinstance(e, StatusEvent)]
    assert len(recoveries) == 1
    match recoveries[0]:
        case StatusEvent(status=StatusType.OUTPUT_RECOVERY, recovery=1, max_recoveries=3):
            pass
        case other:
            raise AssertionError(f"not 0.8's output recovery: {other!r}")
    assert isinstance(recoveries[0], NoticeEvent) and recoveries[0].type is EventType.NOTICE
    assert "continuing (1/3)" in recoveries[0].content
    assert [e.code for e in events if e.type is EventType.CODE] == ["x = 4\nprint(x + 1)"]
    assert await runtime.get_from_namespace("x") == 4
    messages = agent.messages
    cut = next(i for i, m in enumerate(messages) if m.content.endswith("print("))
    assert isinstance(messages[cut], AssistantMessage)
    assert isinstance(messages[cut + 1], UserMessage)
    assert "Resume directly" in messages[cut + 1].content
    assert messages[cut + 2].content == "x + 1)\n```"
    assert model.requests[1][-1]["content"].endswith(messages[cut + 1].content)


async def test_a_reply_still_cut_after_the_last_continuation_is_a_model_error() -> None:
    model = ScriptedModel([{"text": "still going", "finish_reason": "length"}] * 4)
    agent = CaveAgent(model, runtime=IPythonRuntime(), display=False)

    response = await agent.run("q")

    assert response.stop_reason is StopReason.MODEL_ERROR
    assert not response.completed
    assert response.content == "still going" * 4
