"""Upstream 0.8's events built by a caller with 0.8's positional fields, 0.7's
`Event(type, content)` beside them, and `TerminalRenderer` drawing every event of 0.8's
`events` module, those cave never emits included."""

from __future__ import annotations

import io
from collections.abc import AsyncIterator

from rich.console import Console

from cave_tui.agent.display import RichDisplay
from cave_tui.agent.events import Event, EventType, typed
from cave_tui.events import (
    CodeEvent,
    ExecutionResultEvent,
    ExecutionTimeoutEvent,
    FinalResponseEvent,
    SecurityErrorEvent,
    StatusEvent,
    StatusType,
    StoppedEvent,
    StopReason,
    TextEvent,
    ThinkingChunkEvent,
    ThinkingEvent,
    UpstreamOnlyEvent,
    UserPromptEvent,
)
from cave_tui.models import TokenUsage
from cave_tui.renderers import TerminalRenderer


def test_08_positional_fields():
    usage = TokenUsage(10, 5, 15)
    stopped = StoppedEvent("the answer", StopReason.MAX_STEPS, 3, 1.5, usage)
    assert (stopped.content, stopped.stop_reason, stopped.steps, stopped.elapsed) == (
        "the answer",
        StopReason.MAX_STEPS,
        3,
        1.5,
    )
    assert stopped.usage is usage and stopped.type is EventType.STOPPED
    assert UserPromptEvent("q").content == "q"
    assert TextEvent("some prose").content == "some prose"
    assert FinalResponseEvent("done").content == "done"
    assert SecurityErrorEvent("blocked").message == "blocked"
    code = CodeEvent("print(1)")
    assert (code.code, code.content, code.type) == ("print(1)", "print(1)", EventType.CODE)


def test_07_base_event_and_keywords_unchanged():
    text = Event(EventType.TEXT, "hello")
    assert (text.type, text.content) == (EventType.TEXT, "hello")
    # 0.7's bare code event, typed for the front ends, carries its code as `code` too
    code = typed(Event(EventType.CODE, "x = 1"))
    assert isinstance(code, CodeEvent) and code.code == "x = 1"
    # cave's own keyword construction
    mine = CodeEvent(content="y = 2", code="y = 2", step=4, agent="sub")
    assert (mine.code, mine.step, mine.agent) == ("y = 2", 4, "sub")


async def _stream(
    *events: Event | ExecutionResultEvent | UpstreamOnlyEvent,
) -> AsyncIterator[Event | UpstreamOnlyEvent]:
    for event in events:
        yield event  # type: ignore[misc]  # an ExecutionResultEvent is one of cave's events


async def test_every_08_event_renders_and_passes_through():
    every = [
        UserPromptEvent("q"),
        ThinkingChunkEvent("reason"),
        ThinkingEvent("[red]reasoning[/red]", 1200),
        TextEvent("some prose"),
        CodeEvent("print(1)"),
        ExecutionResultEvent("x" * 50, True, persisted=True, persisted_variable="_output_1"),
        ExecutionTimeoutEvent(30.0),
        ExecutionResultEvent("cut", success=False, state_lost=True),
        ExecutionTimeoutEvent(30.0, state_lost=True),
        SecurityErrorEvent("blocked"),
        StatusEvent(StatusType.COMPACTING),
        StatusEvent(StatusType.COMPACTED, before=20, after=8),
        StatusEvent(StatusType.OUTPUT_RECOVERY, recovery=1, max_recoveries=3),
        FinalResponseEvent("done"),
        StoppedEvent("done", StopReason.COMPLETED, 2, 1.0, TokenUsage(10, 5, 15)),
    ]
    out = io.StringIO()
    renderer = TerminalRenderer(Console(file=out, width=200, color_system=None))
    seen = [e async for e in renderer.render(_stream(*every))]
    assert len(seen) == len(every) and all(a is b for a, b in zip(seen, every, strict=True))
    shown = out.getvalue()
    for line in (
        "› q",
        "thought for 1.2s\n[red]reasoning[/red]",  # the model's text, never markup
        "print(1)",
        "output kept whole in the namespace as _output_1",
        "Execution timed out after 30s\n",
        "cut\nThe namespace was lost",
        "Execution timed out after 30s; the namespace was lost",
        "blocked",
        "compacting context…",
        "context compacted (20 → 8 messages)",
        "reply cut at the output limit: continuing (1/3)",
        "2 steps · 15 tokens",
    ):
        assert line in shown, line
    assert "reason\n" not in shown  # a chunk is drawn with its whole segment, once


def test_display_true_names_a_kept_output():
    out = io.StringIO()
    display = RichDisplay(Console(file=out, width=200, color_system=None))
    kept = ExecutionResultEvent("y" * 30, True, persisted=True, persisted_variable="_output_2")
    display.render(kept)  # type: ignore[arg-type]  # an ExecutionResultEvent is cave's event
    assert "output kept whole in the namespace as _output_2" in out.getvalue()
