"""The headless agent core: the loop, its events and its prompt. Never imports Textual."""

from cave_tui.agent.core import AgentResponse, AgentStatus, CaveAgent, ExecutionStatus
from cave_tui.agent.events import Event, EventType

__all__ = ["AgentResponse", "AgentStatus", "CaveAgent", "Event", "EventType", "ExecutionStatus"]
