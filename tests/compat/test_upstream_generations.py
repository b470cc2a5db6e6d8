"""Where upstream 0.7 and 0.8 disagree, the caller's own usage picks; each case both ways.

docs/upstream-compat.md ("Where the two generations disagree") gives each choice's reason.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from cave_tui import CaveAgent
from cave_tui.agent.events import EventType
from cave_tui.runtime import IPythonRuntime, Variable
from tests.compat.scripted import ConversationModel, Turn

TURNS = [Turn("Sum the data", "total = sum(data)\nprint(total)", "It sums to 10.")]


def agent(**kwargs: Any) -> CaveAgent:
    runtime = IPythonRuntime(variables=[Variable("data", [1, 2, 3, 4])])
    return CaveAgent(ConversationModel(TURNS), runtime=runtime, **kwargs)


async def collect(stream: Any) -> list[Any]:
    return [event async for event in stream]


def test_one_stream_serves_a_07_and_an_08_consumer() -> None:
    from cave_tui.events import CodeEvent, ExecutionResultEvent, StoppedEvent, StopReason

    # A plain agent, no 0.8 argument: its stream still ends with 0.8's StoppedEvent.
    events = asyncio.run(collect(agent(display=False).stream_events("Sum the data")))
    # 0.7's README loop: dispatch on `.type`; the StoppedEvent's type falls through it, so
    # the loop prints exactly what it printed under 0.7.
    printed = []
    for event in events:
        if event.type.value == "code":
            printed.append(f"Executing: {event.content}")
        elif event.type.value == "execution_output":
            printed.append(f"Result: {event.content}")
    assert printed == ["Executing: total = sum(data)\nprint(total)", "Result: 10\n"]
    assert events[-1].type is EventType.STOPPED and events[-2].type is EventType.FINAL_RESPONSE
    # 0.7: `.type` and `.content` of each event, as upstream 0.7's if/elif chains read them.
    kinds = [e.type for e in events]
    assert EventType.CODE in kinds and EventType.FINAL_RESPONSE in kinds
    output = next(e for e in events if e.type is EventType.EXECUTION_OUTPUT)
    assert output.content.strip() == "10"
    # 0.8: match on classes; a cell's end is an ExecutionResultEvent; StoppedEvent last.
    code = next(e for e in events if isinstance(e, CodeEvent))
    assert code.code.startswith("total = sum(data)")
    result = next(e for e in events if isinstance(e, ExecutionResultEvent))
    assert result.success and result.output.strip() == "10"
    last = events[-1]
    assert (
        isinstance(last, StoppedEvent)
        and [isinstance(e, StoppedEvent) for e in events].count(True) == 1
    )
    assert last.stop_reason is StopReason.COMPLETED and last.steps == 2
    assert last.content == "It sums to 10." and last.usage.total_tokens > 0


def test_a_failed_cell_is_an_unsuccessful_execution_result() -> None:
    from cave_tui.events import ExecutionResultEvent

    turns = [Turn("Break it", "1 / 0", "It failed.")]
    failing = CaveAgent(ConversationModel(turns), display=False)
    events = asyncio.run(collect(failing.stream_events("Break it")))
    result = next(e for e in events if isinstance(e, ExecutionResultEvent))
    assert result.type is EventType.EXECUTION_ERROR and result.success is False


def test_status_and_stop_reason_name_one_outcome() -> None:
    from cave_tui.agent import AgentStatus
    from cave_tui.events import StopReason

    done = asyncio.run(agent(display=False).run("Sum the data"))
    assert done.status is AgentStatus.COMPLETED and done.stop_reason is StopReason.COMPLETED
    assert done.token_usage is done.usage  # 0.7's name and 0.8's, one object
    capped = asyncio.run(agent(display=False, max_steps=1).run("Sum the data"))
    assert capped.status is AgentStatus.MAX_STEPS_REACHED
    assert capped.stop_reason is StopReason.MAX_STEPS and not capped.completed


@pytest.mark.parametrize(
    "budget", [{"max_total_tokens": 1}, {"max_input_tokens": 1}, {"max_output_tokens": 1}]
)
def test_a_token_budget_ends_the_run_after_the_step_that_crossed_it(budget: dict[str, int]) -> None:
    from cave_tui.agent import AgentStatus
    from cave_tui.events import StoppedEvent, StopReason

    limited = agent(display=False, **budget)
    events = asyncio.run(collect(limited.stream_events("Sum the data")))
    last = events[-1]
    assert isinstance(last, StoppedEvent) and last.stop_reason is StopReason.BUDGET_EXHAUSTED
    assert last.steps == 1  # the crossing step ran its cell; the next did not start
    assert asyncio.run(limited.runtime.retrieve("total")) == 10
    response = asyncio.run(agent(display=False, **budget).run("Sum the data"))
    assert response.status is AgentStatus.BUDGET_EXHAUSTED and not response.completed


def test_max_run_time_ends_the_run_between_steps() -> None:
    from cave_tui.events import StopReason

    response = asyncio.run(agent(display=False, max_run_time=1e-9).run("Sum the data"))
    assert response.stop_reason is StopReason.TIMEOUT and response.steps == 1


def test_a_budget_must_not_be_negative() -> None:
    with pytest.raises(ValueError, match="max_total_tokens"):
        agent(max_total_tokens=-1)


def test_display_kwarg_draws_the_run_and_a_renderer_draws_it_instead(
    capsys: pytest.CaptureFixture[str],
) -> None:
    from cave_tui.renderers import TerminalRenderer, render_run

    # 0.7: the agent draws its own run (display=True, the default).
    asyncio.run(agent(display=True).run("Sum the data"))
    drawn_by_agent = capsys.readouterr().out
    assert drawn_by_agent.count("total = sum(data)") == 1
    # 0.7 with display=False: nothing is drawn.
    asyncio.run(agent(display=False).run("Sum the data"))
    assert capsys.readouterr().out == ""
    # 0.8: the renderer draws, and the agent's own display stays off for that stream.
    response = asyncio.run(render_run(agent(display=True), "Sum the data"))
    drawn = capsys.readouterr().out
    assert drawn.count("total = sum(data)") == 1 and "done  " in drawn
    assert response.content == "It sums to 10."

    async def wrapped() -> list[Any]:
        return [e async for e in TerminalRenderer().render(agent().stream_events("Sum the data"))]

    assert len(asyncio.run(wrapped())) > 3
    assert capsys.readouterr().out.count("total = sum(data)") == 1


def test_a_cancelled_stream_still_ends_with_a_stopped_event() -> None:
    from cave_tui.events import StoppedEvent, StopReason

    turns = [Turn("Wait", "import time\ntime.sleep(0.01)", "Waited.")]
    slow = CaveAgent(ConversationModel(turns), display=False)

    # athrow delivers the cancellation at the stream's yield: the StoppedEvent comes back.
    async def cancelled() -> Any:
        stream = slow.stream_events("Wait")
        await stream.__anext__()
        return await stream.athrow(asyncio.CancelledError())

    stopped = asyncio.run(cancelled())
    assert isinstance(stopped, StoppedEvent) and stopped.stop_reason is StopReason.CANCELLED


def test_front_ends_read_the_turns_own_end_and_keep_the_stop_reason() -> None:
    from cave_tui.app.services import AppServices
    from cave_tui.events import StopReason

    services = AppServices(model=ConversationModel(TURNS), runtime=agent().runtime)
    hooked: list[Any] = []
    services.event_hooks.append(hooked.append)

    async def turn() -> list[Any]:
        try:
            return [e async for e in services.stream("Sum the data")]
        finally:
            await services.shutdown()

    events = asyncio.run(turn())
    # cave's front ends and recordings see the turn end with its own last event ...
    assert events[-1].type is EventType.FINAL_RESPONSE and hooked == events
    # ... and the StoppedEvent's reason, steps and usage are kept for them.
    assert services.last_stop is not None
    assert services.last_stop.stop_reason is StopReason.COMPLETED
    assert services.last_stop.steps == 2


def test_07_names_its_readme_and_examples_import() -> None:
    import cave_tui
    from cave_tui import LogLevel

    assert {"LogLevel", "Logger"} <= set(cave_tui.__all__)
    assert LogLevel.ERROR < LogLevel.INFO < LogLevel.DEBUG
    quiet = agent(display=False, log_level=LogLevel.ERROR)
    assert quiet.log_level is LogLevel.ERROR


def test_logger_prints_kernel_text_as_text(capsys: pytest.CaptureFixture[str]) -> None:
    from cave_tui import Logger, LogLevel

    logger = Logger(LogLevel.INFO)
    logger.info("Output", "[bold]x[/bold]\x1b[31m")
    logger.debug("Hidden", "below the level")
    out = capsys.readouterr().out
    assert "[INFO] Output:" in out and "[bold]x[/bold]" in out
    assert "\x1b[31m" not in out and "Hidden" not in out
