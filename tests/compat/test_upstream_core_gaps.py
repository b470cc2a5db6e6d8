"""What upstream's agent does in its core that a porting user sees: prose-only `text`
events, `execution_output` content as what the cell printed, `stream_events()` rendering
when `display` is on, and an agent that always has a `_skill_registry`."""

from __future__ import annotations

import asyncio

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import EventType
from cave_tui.runtime import IPythonRuntime
from tests.compat.scripted import ConversationModel, Turn

TURNS = [Turn("Add one and two", "total = 1 + 2\nprint(total)", "It is 3.")]


def events(display: bool = False) -> list:
    agent = CaveAgent(ConversationModel(TURNS), runtime=IPythonRuntime(), display=display)

    async def collect() -> list:
        return [e async for e in agent.stream_events("Add one and two")]

    return asyncio.run(collect())


def test_the_scripted_turn_itself_runs():
    """The turn the gaps below use works: code, its output, the answer."""
    seen = events()
    assert [e.content for e in seen if e.type == EventType.FINAL_RESPONSE] == ["It is 3."]
    assert any(e.type == EventType.CODE and "total = 1 + 2" in e.content for e in seen)


def test_text_events_hold_only_the_prose():
    text = "".join(e.content for e in events() if e.type == EventType.TEXT)
    assert "```" not in text and "total = 1 + 2" not in text
    assert "I'll do that in code." in text


def test_execution_output_content_is_what_the_cell_printed():
    (output,) = [e for e in events() if e.type == EventType.EXECUTION_OUTPUT]
    assert output.content.strip() == "3"


def test_stream_events_render_when_display_is_on(capsys: pytest.CaptureFixture[str]):
    events(display=True)
    out = capsys.readouterr().out
    assert "total = 1 + 2" in out and "It is 3." in out


def test_an_agent_without_skills_has_an_empty_skill_registry():
    agent = CaveAgent(ConversationModel([]), display=False)
    assert agent._skill_registry.list_skills() == []
