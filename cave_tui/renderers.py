"""Upstream CaveAgent 0.8's `cave_agent.renderers`: terminal rendering as a wrapper of a run.

In 0.8 the agent draws nothing itself; a caller wraps `agent.stream_events(q)` in a
`TerminalRenderer` (or calls `render_run`). cave keeps 0.7's `display=` on the agent, so a
renderer handed cave's stream turns the agent's own display off for that run
(`EventStream.render_elsewhere`): the run is drawn once, by the renderer the caller chose.
Drawing is cave's `RichDisplay` (kernel output shown as text, never as markup).
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, AsyncIterator

from rich.console import Console
from rich.text import Text

from cave_tui.agent import events as ev
from cave_tui.agent.display import RichDisplay
from cave_tui.agent.event_stream import EventStream
from cave_tui.agent.response import AgentResponse, status_of
from cave_tui.agent.stop_reason import StopReason
from cave_tui.display import render_user_prompt
from cave_tui.events import (
    ExecutionTimeoutEvent,
    StatusEvent,
    StatusType,
    ThinkingChunkEvent,
    ThinkingEvent,
    UpstreamOnlyEvent,
)
from cave_tui.printable import plain_text

__all__ = ["TerminalRenderer", "render_events", "render_run", "render_user_prompt"]

# Endings worth a line of their own; COMPLETED needs none.
STOP_NOTICES = {
    StopReason.MAX_STEPS: "Max steps reached",
    StopReason.TIMEOUT: "Maximum run time reached",
    StopReason.BUDGET_EXHAUSTED: "Token budget exhausted",
    StopReason.CANCELLED: "Cancelled",
    StopReason.MODEL_ERROR: "Model error",
    StopReason.RUNTIME_ERROR: "Runtime error",
    StopReason.INTERNAL_ERROR: "Internal error",
}


STATE_LOST = "The namespace was lost: stopping the cell restarted its kernel"


def upstream_only_line(event: ThinkingEvent | ExecutionTimeoutEvent | StatusEvent) -> Text:
    """The line drawn for one of 0.8's events that cave itself never emits."""
    match event:
        case ThinkingEvent():
            seconds = event.duration_ms / 1000
            return plain_text(f"thought for {seconds:.1f}s\n{event.content.rstrip()}", "dim italic")
        case ExecutionTimeoutEvent():
            lost = f"; {STATE_LOST.lower()}" if event.state_lost else ""
            return Text(f"Execution timed out after {event.timeout:g}s{lost}", style="bold red")
        case StatusEvent(status=StatusType.COMPACTING):
            return Text("compacting context…", style="yellow")
        case StatusEvent(status=StatusType.COMPACTED):
            counts = f" ({event.before} → {event.after} messages)" if event.before else ""
            return Text(f"context compacted{counts}", style="yellow")
        case StatusEvent():
            of = f" ({event.recovery}/{event.max_recoveries})" if event.recovery else ""
            return Text(f"reply cut at the output limit: continuing{of}", style="yellow")


class TerminalRenderer:
    """Renders an event stream to the terminal and passes every event on unchanged.
    One instance per run (it holds the run's pending prose)."""

    def __init__(self, console: Console | None = None) -> None:
        self.display = RichDisplay(console)

    @property
    def console(self) -> Console:
        return self.display.console

    async def render(
        self, events: AsyncIterator[ev.Event | UpstreamOnlyEvent]
    ) -> AsyncGenerator[ev.Event | UpstreamOnlyEvent, None]:
        """Consume *events*, render each, and re-yield it. Every event of 0.8's
        `events` module is drawn, also those cave never emits (a caller's own stream)."""
        if isinstance(events, EventStream):
            events.render_elsewhere()  # the agent's `display=` would draw the run a second time
        try:
            async for event in events:
                self.handle(event)
                yield event
        finally:
            self.display.flush()

    def handle(self, event: ev.Event | UpstreamOnlyEvent) -> None:
        """Render one event."""
        match event:
            case ev.StoppedEvent():
                self._stopped(event)
            case ThinkingChunkEvent():
                pass  # its ThinkingEvent follows with the whole segment
            case ThinkingEvent() | ExecutionTimeoutEvent() | StatusEvent() if not isinstance(
                event, ev.Event
            ):  # cave's own status events (compaction, output recovery) are drawn as cave's
                self.display.flush()
                self.console.print(upstream_only_line(event))
            case ev.ExecutionOutputEvent() | ev.ExecutionErrorEvent() if event.state_lost:
                self.display.render(event)
                self.console.print(Text(STATE_LOST, style="bold yellow"))
            case _:
                self.display.render(event)

    def _stopped(self, event: ev.StoppedEvent) -> None:
        self.display.flush()
        notice = STOP_NOTICES.get(event.stop_reason)
        if notice:
            self.console.print(Text(notice, style="bold yellow"))
        details = [f"{event.elapsed:.1f}s", f"{event.steps} steps"]
        usage = event.usage
        if usage.total_tokens > 0:
            details.append(
                f"{usage.total_tokens:,} tokens (prompt: {usage.prompt_tokens:,}, "
                f"completion: {usage.completion_tokens:,})"
            )
        self.console.print(Text("done  " + " · ".join(details), style="dim"))


async def render_events(events: AsyncIterator[ev.Event | UpstreamOnlyEvent]) -> None:
    """Render an event stream to its end, discarding the events (0.8's signature; 0.7's,
    with a `context`, is `cave_tui.display.render_events`)."""
    async for _ in TerminalRenderer().render(events):
        pass


async def render_run(agent: object, query: str) -> AgentResponse:
    """Run *agent* on *query* rendered in the terminal, and return its `AgentResponse`."""
    from cave_tui.agent.core import CaveAgent

    if not isinstance(agent, CaveAgent):
        raise TypeError(f"render_run() takes a CaveAgent, not {type(agent).__name__}")
    stream = agent.stream_events(query)
    await drain_to_response(TerminalRenderer().render(stream))
    assert stream.response is not None  # a drained stream ran to its RunDone
    return stream.response


async def drain_to_response(events: AsyncIterator[ev.Event | UpstreamOnlyEvent]) -> AgentResponse:
    """Consume *events* to their StoppedEvent and return the response it describes (its
    content, reason, steps, usage and time; `render_run` returns the agent's own)."""
    stopped: ev.StoppedEvent | None = None
    async for event in events:
        if isinstance(event, ev.StoppedEvent):
            stopped = event
    if stopped is None:
        raise RuntimeError("the event stream ended without a StoppedEvent")
    return AgentResponse(
        content=stopped.content,
        status=status_of(stopped.stop_reason),
        steps=stopped.steps,
        usage=stopped.usage,
        elapsed=stopped.elapsed,
    )
