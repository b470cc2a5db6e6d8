"""`McpFrontEnd`: what a slash command run by an MCP tool prints, kept for the tool's reply.

A command's question goes to the client's user by elicitation when the client can answer
(`Questions`); else it is answered no (its refusal says what was not done). What only a
screen can do is not available.
"""

from __future__ import annotations

from collections.abc import AsyncIterable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from cave_tui.app.commands.registry import Severity
from cave_tui.frontends.mcp.asking import NobodyToAsk, Questions
from cave_tui.printable import printable

if TYPE_CHECKING:
    from cave_tui.agent import events as ev
    from cave_tui.dataio.progress import Progress

NO_REPLAY = "not available over MCP: replays are drawn by cave's own front ends"
FAILED_STYLES = frozenset({"error", "warning"})  # a line saying the command did not do its work


@dataclass
class McpFrontEnd:
    """A `FrontEnd` that collects the lines a command prints (printable text only)."""

    questions: Questions = field(default_factory=NobodyToAsk)
    lines: list[tuple[str, str]] = field(default_factory=list)  # (text, style)

    @property
    def failed(self) -> bool:
        """A line said that the command failed or did not do what it was asked."""
        return any(style in FAILED_STYLES for _, style in self.lines)

    @property
    def text(self) -> str:
        return "\n".join(text for text, _ in self.lines)

    def print(self, text: str, *, style: str = "") -> None:
        self.lines.append((printable(text), style))

    async def confirm(self, question: str) -> bool:
        why = self.questions.cannot_ask()
        if why is None:
            return await self.questions.confirm(question)
        self.print(f"{question} (not asked: {why}; taken as no)")
        return False

    def progress(self, progress: Progress, label: str) -> None:
        pass  # a tool call's progress is not reported in this slice

    def theme_names(self) -> list[str]:
        return []

    def current_theme(self) -> str:
        return ""

    def quit(self) -> None:
        self.print("not available over MCP: the client ends the server", style="error")

    def clear(self) -> None:
        pass  # nothing is shown

    def set_theme(self, name: str) -> None:
        self.print("not available over MCP: there are no themes", style="error")

    def insert(self, text: str, *, replace: bool = False) -> None:
        pass  # there is no input line

    def refresh_status(self) -> None:
        pass  # there is no status line

    def show(self, name: str) -> None:
        self.print("not available over MCP: use the `describe` tool", style="error")

    def render(self, event: ev.Event) -> None:
        self.print(event.content)

    def replay_events(self, events: AsyncIterable[ev.Event]) -> None:
        self.print(NO_REPLAY, style="error")

    def replay_session(self, folder: Path, *, speed: float = 1.0, trust: bool = False) -> None:
        self.print(NO_REPLAY, style="error")

    def session_loaded(self, transcript: list[ev.Event]) -> None:
        pass  # the conversation is cave's agent's, not shown here

    def notify(self, message: str, severity: Severity = "information") -> None:
        self.print(message, style="error" if severity == "error" else "")
