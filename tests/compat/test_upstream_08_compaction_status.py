"""cave's compaction events are 0.8's `StatusEvent(COMPACTING)` / `StatusEvent(COMPACTED)`
for a 0.8 caller that matches on them (their message counts are not known: None), and
stay cave's CompactingEvent/CompactedEvent (`event.type`) for 0.7 callers and front ends."""

from __future__ import annotations

from cave_tui import CaveAgent
from cave_tui.agent import EventType
from cave_tui.events import StatusEvent, StatusType
from cave_tui.models import ContextOverflowError
from tests.agent.compaction.conftest import RoutingModel, summary_reply
from tests.agent.compaction.test_tiers import chat_history


async def test_compaction_is_seen_as_0_8_status_events() -> None:
    model = RoutingModel(
        [ContextOverflowError("the request exceeds the available context size"), "answer"],
        [summary_reply("Six questions about numbers were answered.")] * 5,
    )
    agent = CaveAgent(model, context_window=100_000, messages=chat_history(6), display=False)

    events = [e async for e in agent.stream_events("one more?")]

    statuses = [e for e in events if isinstance(e, StatusEvent)]
    kinds = []
    for event in statuses:
        match event:
            case StatusEvent(status=StatusType.COMPACTING):
                kinds.append(event.type)
            case StatusEvent(status=StatusType.COMPACTED, before=None, after=None):
                kinds.append(event.type)
    assert kinds == [EventType.COMPACTING, EventType.COMPACTED]
