"""Upstream 0.8's `ExecutionResultEvent(output, success=...)` is built by the caller as in
0.8 and is cave's cell event, which cave's own cells still match by class."""

from __future__ import annotations

import io

import pytest
from rich.console import Console

from cave_tui import CaveAgent
from cave_tui.agent.events import ExecutionErrorEvent, ExecutionOutputEvent
from cave_tui.events import ExecutionResultEvent
from cave_tui.models import ScriptedModel
from cave_tui.renderers import TerminalRenderer


def test_built_as_08_builds_it():
    ok = ExecutionResultEvent("1", success=True)
    failed = ExecutionResultEvent("boom", success=False, state_lost=True)
    kept = ExecutionResultEvent("x" * 50, True, persisted=True, persisted_variable="_output_1")
    assert isinstance(ok, ExecutionResultEvent) and isinstance(ok, ExecutionOutputEvent)
    assert isinstance(failed, ExecutionErrorEvent)
    assert (ok.output, ok.content, ok.success, ok.persisted, ok.state_lost) == (
        "1",
        "1",
        True,
        False,
        False,
    )
    assert (failed.output, failed.success, failed.state_lost) == ("boom", False, True)
    assert kept.persisted and kept.persisted_variable == "_output_1"
    assert "state_lost" not in failed.to_dict()  # session logs keep their format


def test_matched_by_class_and_position():
    match ExecutionResultEvent("boom", success=False):
        case ExecutionResultEvent(output, False):
            assert output == "boom"
        case _:
            pytest.fail("a failed result did not match")


def test_a_kept_output_names_its_variable():
    with pytest.raises(ValueError, match="persisted_variable"):
        ExecutionResultEvent("x", success=True, persisted=True)
    with pytest.raises(ValueError, match="persisted=True"):
        ExecutionResultEvent("x", success=True, persisted_variable="_output_1")


async def test_a_callers_events_render_and_pass_through_unchanged():
    async def events():
        yield ExecutionResultEvent("forty-two", success=True)
        yield ExecutionResultEvent("it broke", success=False)

    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=80, color_system=None))
    seen = [e async for e in renderer.render(events())]
    assert [(e.output, e.success) for e in seen] == [("forty-two", True), ("it broke", False)]
    shown = out.getvalue()
    assert "forty-two" in shown and "it broke" in shown


async def test_cave_s_own_cells_still_match_it():
    agent = CaveAgent(ScriptedModel(["```python\nprint(6)\n```", "6"]), display=False)
    events = [e async for e in agent.stream_events("six")]
    (result,) = [e for e in events if isinstance(e, ExecutionResultEvent)]
    assert isinstance(result, ExecutionOutputEvent) and result.success
    assert result.output == "6\n" and result.state_lost is False
    await agent.runtime.stop()
