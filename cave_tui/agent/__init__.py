"""The headless agent core: the loop, its events and its prompt. Never imports Textual.

Importing this package is cheap: the loop (`CaveAgent`, core.py) loads on first use of its
names, so a front end imports `cave_tui.agent.events` without loading the loop.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cave_tui.agent.events import Event, EventType

if TYPE_CHECKING:  # pragma: no cover
    from cave_tui.agent.core import AgentResponse, AgentStatus, CaveAgent, ExecutionStatus

_FROM_CORE = frozenset({"AgentResponse", "AgentStatus", "CaveAgent", "ExecutionStatus"})

__all__ = ["AgentResponse", "AgentStatus", "CaveAgent", "Event", "EventType", "ExecutionStatus"]


def __getattr__(name: str) -> Any:
    if name in _FROM_CORE:
        from cave_tui.agent import core

        return getattr(core, name)
    raise AttributeError(f"module 'cave_tui.agent' has no attribute {name!r}")
