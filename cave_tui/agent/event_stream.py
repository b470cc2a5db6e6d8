"""What `CaveAgent.stream_events()` returns: the run's events, upstream 0.8's StoppedEvent
always last.

An async generator (iterate it, `aclose()` it, `contextlib.aclosing` it) that starts the
run on its first `__anext__`. Until then a renderer that draws the events itself (upstream
0.8's `TerminalRenderer`) can turn the agent's own `display=` rendering off for this stream
(`render_elsewhere`), so a run is never drawn twice.

The StoppedEvent is 0.8's promise and is always sent: upstream 0.7 had no such event and
promised nothing about the last one, and 0.7's callers dispatch on `event.type`, so a type
they do not know passes through their loop (docs/upstream-compat.md, "the stream's end").
"""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, AsyncIterator
from types import TracebackType
from typing import Any, Protocol

from cave_tui.agent import events as ev
from cave_tui.agent.response import AgentResponse, RunDone
from cave_tui.agent.stop_reason import StopReason
from cave_tui.models.base import Usage


class StreamedAgent(Protocol):
    """What an `EventStream` uses of its agent (`CaveAgent`)."""

    display: bool
    shown_by_parent: bool
    name: str | None
    usage: Usage

    def _run_events(self, task: str) -> AsyncGenerator[ev.Event | RunDone, None]: ...


def stopped_event(response: AgentResponse, agent: str | None) -> ev.StoppedEvent:
    """The StoppedEvent of a run that ended with *response*."""
    return ev.StoppedEvent(
        content=response.content,
        step=response.steps,
        agent=agent,
        stop_reason=response.stop_reason,
        steps=response.steps,
        elapsed=response.elapsed,
        usage=response.usage,
    )


class EventStream(AsyncGenerator[ev.Event, None]):
    """The events of one run of *agent* on *task*; see the module docstring."""

    def __init__(self, agent: StreamedAgent, task: str) -> None:
        self.agent = agent
        self.task = task
        self.displayed = agent.display and not agent.shown_by_parent
        self._events: AsyncGenerator[ev.Event, None] | None = None
        self.response: AgentResponse | None = None  # the run's, once it has ended

    def render_elsewhere(self) -> None:
        """The caller renders these events: the agent's own `display` stays off for them."""
        if self._events is not None:
            raise RuntimeError("render_elsewhere() is called before the stream is iterated")
        self.displayed = False

    def _started(self) -> AsyncGenerator[ev.Event, None]:
        if self._events is None:
            self._events = _events(self)
        return self._events

    def __aiter__(self) -> EventStream:
        return self

    async def __anext__(self) -> ev.Event:
        return await self._started().__anext__()

    async def asend(self, value: None) -> ev.Event:
        return await self._started().asend(value)

    async def athrow(
        self,
        typ: type[BaseException] | BaseException,
        val: BaseException | object = None,
        tb: TracebackType | None = None,
    ) -> ev.Event:
        error = typ if isinstance(typ, BaseException) else typ()
        return await self._started().athrow(error)

    async def aclose(self) -> None:
        if self._events is not None:
            await self._events.aclose()


async def _events(stream: EventStream) -> AsyncGenerator[ev.Event, None]:
    agent = stream.agent
    run = agent._run_events(stream.task)
    source: AsyncIterator[Any] = run
    if stream.displayed:
        from cave_tui.agent.display import rendered

        source = rendered(source)
    started = asyncio.get_running_loop().time()
    step = 0

    def ended(reason: StopReason) -> ev.StoppedEvent:
        elapsed = asyncio.get_running_loop().time() - started
        return ev.StoppedEvent(
            content="", step=step, agent=agent.name, stop_reason=reason, steps=step,
            elapsed=elapsed, usage=agent.usage,
        )  # fmt: skip

    try:
        async for item in source:
            if isinstance(item, RunDone):
                stream.response = item.response
                yield stopped_event(item.response, agent.name)
                return
            step = max(step, item.step)
            yield item
    except asyncio.CancelledError:
        yield ended(StopReason.CANCELLED)
        raise
    except Exception:
        yield ended(StopReason.INTERNAL_ERROR)
        raise
    finally:  # closed early (aclose, a consumer's break): the run ends now, not when collected
        await run.aclose()
