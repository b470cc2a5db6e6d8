"""Multi-agent: sub-agents driven from an agent's cells, and their events.

A `CaveAgent` injected as a `Variable` into another agent's runtime is an
ordinary object there: generated code calls `await cleaner.run(task)` (top-level
await runs on the runtime's own worker loop) or `cleaner.run_sync(task)`.

While a cell of the parent runs, the parent's `SubAgentHub` (an add-on of
`cells.run_cell`) forwards every event of its attached sub-agents (and the cell's own
output, see cell_output.py) into the parent's own event stream, in order and as they
happen, tagged with the sub-agent's name (`Event.agent`; nested agents read
`outer/inner`). Sub-agents run on the runtime's worker thread (or wherever the cell
sends them), so the hand-off is thread-safe: the sub-agent's event sink schedules the
event on the parent's loop, and the parent drains that queue while it awaits the cell.
"""

from __future__ import annotations

import asyncio
import contextlib
import dataclasses
import threading
from collections.abc import Iterator
from typing import Any

from cave_tui.agent import events as ev
from cave_tui.agent.cell_output import CellEvents

CHILD_STOP_GRACE = 5.0  # seconds a stopped parent cell waits for a sub-agent's cell to stop


def describe_agent(agent: Any, name: str) -> str:
    """One line for the namespace description: what it is and how to drive it."""
    label = f" {agent.name!r}" if agent.name and agent.name != name else ""
    names = [n for n in agent.runtime.injected if n != "activate_skill"]
    shown = ", ".join(names[:6]) + (", …" if len(names) > 6 else "")
    holds = f"; its runtime holds {shown}" if shown else ""
    return (
        f"sub-agent{label}{holds}. Run it: `r = await {name}.run(task)` (r.content is its "
        f"answer; sync: {name}.run_sync(task)). Its data: "
        f"`await {name}.runtime.retrieve(name)`, `{name}.runtime.update_variable(name, value)`"
    )


class SubAgentHub:
    """Attaches sub-agents to one parent agent and forwards their events to its stream."""

    def __init__(self, agent: Any, agent_type: type) -> None:
        """*agent_type* is the agent class (`CaveAgent`): injected objects of it are attached."""
        self.agent = agent
        self.agent_type = agent_type
        self._labels: dict[int, str] = {}  # id(child) -> label
        self._children: list[Any] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._queue: asyncio.Queue[ev.Event] | None = None
        self._runtime: object = None  # the parent's runtime while its cell runs

    @property
    def children(self) -> list[str]:
        return list(self._labels.values())

    def attach(self, child: Any, label: str | None = None) -> None:
        """Forward *child*'s events into this agent's stream while a cell of ours runs."""
        if child is self.agent or id(child) in self._labels:
            return
        own = child.name or label or f"agent-{len(self._labels) + 1}"
        self._labels[id(child)] = own
        self._children.append(child)
        child.shown_by_parent = True
        child.add_event_sink(self._make_sink(child, own))

    def scan(self) -> None:
        """Attach every agent (`agent_type`) injected into the parent's runtime."""
        for name, item in self.agent.runtime.injected.items():
            value = getattr(item, "value", None)
            if isinstance(value, self.agent_type):
                self.attach(value, name)

    def _make_sink(self, child: Any, own: str) -> Any:
        def sink(event: ev.Event) -> None:
            with self._lock:
                loop, queue = self._loop, self._queue
            if loop is None or queue is None or loop.is_closed():
                return  # the parent is not running a cell: nothing to forward into
            if event.agent is None or event.agent == child.name:
                tag = own
            else:
                tag = f"{own}/{event.agent}"
            forwarded = dataclasses.replace(event)
            forwarded.agent = tag
            try:
                loop.call_soon_threadsafe(queue.put_nowait, forwarded)
            except RuntimeError:  # loop closed in between
                pass

        return sink

    @contextlib.contextmanager
    def around(self, cell: CellEvents) -> Iterator[None]:
        """While *cell* (of the parent) runs, forward the attached sub-agents' events into
        its queue (`cells.run_cell` add-on); agents injected since are attached first."""
        self.scan()
        self._runtime = self.agent.runtime
        with self._lock:
            self._loop, self._queue = cell.loop, cell.queue
        try:
            yield
        finally:
            with self._lock:
                self._loop = self._queue = None

    async def on_stop(self) -> None:
        """The parent's cell is stopped: a cell awaiting a sub-agent only stops once the
        sub-agent's own cell does, so theirs are interrupted first. Each child's turn ends
        with its cell (it does not ask its model again); a cell about to start when we look
        is interrupted once it has (or is not started)."""
        for child in self._children:
            if child.runtime is self._runtime:
                child.stop_turn()  # its cell is ours: interrupted with it
            else:
                await child.stop(CHILD_STOP_GRACE)
