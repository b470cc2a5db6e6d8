"""Running a scripted agent and reading its policies' interventions."""

from __future__ import annotations

from typing import Any

from cave_tui.agent import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.models import ScriptedModel


async def run_turn(
    runtime: Any, replies: list[str], task: str, **options: Any
) -> tuple[list[ev.Event], ScriptedModel, CaveAgent]:
    """One turn of a CaveAgent driven by *replies*: its events, its model, the agent."""
    model = ScriptedModel(replies)
    agent = CaveAgent(model, runtime, display=False, **options)
    events = [e async for e in agent.stream_events(task)]
    return events, model, agent


def interventions(events: list[ev.Event]) -> list[tuple[str, ev.InterventionKind]]:
    """(policy, kind) of each intervention event, in order."""
    return [(e.policy, e.kind) for e in events if isinstance(e, ev.InterventionEvent)]


def fenced(code: str) -> str:
    return f"```python\n{code}\n```"
