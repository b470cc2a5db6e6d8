"""cave's events as ACP session updates: the one mapping, for live turns and loaded sessions.

The model's prose is streamed as `agent_message_chunk`s; each cell is a `tool_call` (kind
`execute`, its code as content) followed by `tool_call_update`s: its output while it runs
(in progress), then its outcome (completed, or failed with the traceback, the guard's
refusal or "skipped"). Every string is printable text (`printable`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import Enum

from acp import (
    start_tool_call,
    text_block,
    tool_content,
    update_agent_message_text,
    update_agent_thought_text,
    update_tool_call,
    update_user_message_text,
)
from acp.schema import (
    AgentMessageChunk,
    AgentThoughtChunk,
    ContentToolCallContent,
    FileEditToolCallContent,
    TerminalToolCallContent,
    ToolCallProgress,
    ToolCallStart,
    ToolCallStatus,
    UserMessageChunk,
)

from cave_tui.agent import events as ev
from cave_tui.printable import printable

Update = UserMessageChunk | AgentMessageChunk | AgentThoughtChunk | ToolCallStart | ToolCallProgress

ToolContent = ContentToolCallContent | FileEditToolCallContent | TerminalToolCallContent

STILL_RUNNING = (
    "cancelled, but the cell is still running: it is inside native code, which the in-process "
    "runtime cannot interrupt (the kernel runtime, --kernel, can); the next cell waits for it"
)
OUTPUT_LIMIT = 20_000  # characters of a cell's output kept in its tool call (head and tail)


class StopReason(Enum):
    """Why a prompt ended, as the protocol names it (`PromptResponse.stopReason`)."""

    END_TURN = "end_turn"
    MAX_TURN_REQUESTS = "max_turn_requests"
    CANCELLED = "cancelled"
    REFUSAL = "refusal"


def code_content(code: str) -> list[ToolContent]:
    """A cell's code as tool-call content (a fenced Python block)."""
    return [tool_content(text_block(f"```python\n{printable(code)}\n```"))]


def _text(text: str) -> list[ToolContent]:
    return [tool_content(text_block(text))]


def _bounded(text: str) -> str:
    """*text* with its head and tail kept past `OUTPUT_LIMIT` characters, saying how much went."""
    text = printable(text)
    if len(text) <= OUTPUT_LIMIT:
        return text
    half = OUTPUT_LIMIT // 2
    return f"{text[:half]}\n… {len(text) - 2 * half:,} characters elided …\n{text[-half:]}"


def cell_title(code: str) -> str:
    """A cell's one-line title: its first line of code."""
    first = next((line.strip() for line in code.splitlines() if line.strip()), "")
    first = printable(first)
    return f"Run Python: {first[:60]}{'…' if len(first) > 60 else ''}"


@dataclass
class EventUpdates:
    """Turns cave's events into session updates, tracking the cell (tool call) under way.

    One per ACP session: tool-call ids (`cell-N`) are unique within it. A tool call's
    content is replaced by each update (the protocol's rule), so each carries the code and
    the output so far.
    """

    cells: int = 0
    open_cell: str | None = None  # the tool call of the cell not finished yet
    stop: StopReason = StopReason.END_TURN  # the last turn's outcome so far
    error: str | None = None  # the turn failed: why (an `ErrorEvent`)
    _code: str = ""  # the open cell's code
    _printed: list[str] = field(default_factory=list)  # what the open cell printed so far

    def begin_turn(self) -> None:
        """A new turn: its outcome starts as end_turn."""
        self.stop = StopReason.END_TURN
        self.error = None

    def updates(self, event: ev.Event) -> list[Update]:
        """The session updates showing *event* (none for bookkeeping events)."""
        match event:
            case ev.UserEvent():
                return [update_user_message_text(printable(event.content))]
            case ev.TextEvent():
                text = printable(event.content)
                return [update_agent_message_text(text)] if text else []
            case ev.CodeEvent() if event.source is ev.CodeSource.EDITED and self.open_cell:
                self._code = event.code
                return [update_tool_call(self.open_cell, content=self._content())]
            case ev.CodeEvent():
                self.cells += 1
                self.open_cell = f"cell-{self.cells}"
                self._code, self._printed = event.code, []
                start = start_tool_call(
                    self.open_cell,
                    cell_title(event.code),
                    kind="execute",
                    status="pending",
                    content=code_content(event.code),
                    raw_input={"code": printable(event.code)},
                )
                return [start]
            case ev.OutputEvent() if self.open_cell:
                self._printed.append(event.content)
                status: ToolCallStatus = "in_progress"
                return [update_tool_call(self.open_cell, status=status, content=self._content())]
            case ev.ExecutionOutputEvent():
                return self._close("completed", event.output)
            case ev.ExecutionErrorEvent():
                return self._close("failed", event.content)
            case ev.SecurityErrorEvent():
                return self._close("failed", f"refused by cave's guard: {event.content}")
            case ev.NoticeEvent() if event.kind is ev.NoticeKind.CODE_SKIPPED:
                return self._close("failed", "skipped: the cell did not run")
            case ev.NoticeEvent() | ev.InterventionEvent():
                return [update_agent_thought_text(printable(event.content))]
            case ev.FinalResponseEvent():
                text = printable(event.content) if event.unseen else ""
                if event.unsupported:
                    text = f"{text}\n\n{ev.UNSUPPORTED_MARK}" if text else ev.UNSUPPORTED_MARK
                return [update_agent_message_text(text)] if text else []
            case ev.MaxStepsReachedEvent():
                self.stop = StopReason.MAX_TURN_REQUESTS
                return [update_agent_message_text(printable(event.content))]
            case ev.CancelledEvent():
                self.stop = StopReason.CANCELLED
                return []
            case ev.ErrorEvent():
                self.error = printable(event.content)
                return [update_agent_message_text(f"cave: {self.error}")]
        return []

    def interrupted(self, *, still_running: bool = False) -> list[Update]:
        """The turn was cancelled: the cell under way, if any, failed as interrupted (or,
        *still_running*, as one that could not be stopped)."""
        self.stop = StopReason.CANCELLED
        said = STILL_RUNNING if still_running else "interrupted: the cell was stopped"
        return self._close("failed", "".join(self._printed) + "\n" + said)

    def _content(self, output: str | None = None) -> list[ToolContent]:
        """The open cell's content: its code, then its output (so far, or *output*)."""
        text = "".join(self._printed) if output is None else output
        body = _text(_bounded(text)) if text.strip() else []
        return [*code_content(self._code), *body]

    def _close(self, status: ToolCallStatus, text: str) -> list[Update]:
        """The open cell's outcome (*status*: completed or failed) with its whole output."""
        cell, self.open_cell = self.open_cell, None
        if cell is None:
            return []
        update = update_tool_call(
            cell,
            status=status,
            content=self._content(text),
            raw_output={"output": printable(text)},
        )
        self._code, self._printed = "", []
        return [update]
