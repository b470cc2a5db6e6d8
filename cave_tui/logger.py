"""Upstream CaveAgent 0.7's `LogLevel` and `Logger` (its `stream.py` example imports both).

cave's agent writes no log lines of its own (its `display=` rendering and events say what
happens), so `CaveAgent(log_level=...)` is accepted and kept, and changes nothing. `Logger`
prints titled messages as upstream's does, each shown when its level is at most the
logger's; the content is printed as text, never as markup.
"""

from __future__ import annotations

from enum import IntEnum
from typing import TYPE_CHECKING

from cave_tui.printable import printable

if TYPE_CHECKING:
    from rich.console import Console


class LogLevel(IntEnum):
    """How much a `Logger` shows: ERROR only, INFO too, or DEBUG too."""

    ERROR = 0
    INFO = 1
    DEBUG = 2


_LEVEL_STYLES = {
    LogLevel.DEBUG: "yellow",
    LogLevel.INFO: "bright_blue",
    LogLevel.ERROR: "bold bright_red",
}


class Logger:
    """Prints `[LEVEL] title:` then the content, styled, for levels up to *level*."""

    def __init__(self, level: LogLevel = LogLevel.INFO, console: Console | None = None) -> None:
        from rich.console import Console  # Rich loads when a logger is made, not on import

        self.console = console or Console()
        self.level = level

    def _log(self, title: str, content: object, style: str, level: LogLevel) -> None:
        if level > self.level:
            return
        from rich.style import Style
        from rich.text import Text

        parsed = Style.parse(style)
        message = Text()
        message.append(f"[{level.name}] ", _LEVEL_STYLES[level])
        message.append(f"{printable(title)}: \n", parsed)
        message.append(printable(str(content)), parsed)
        self.console.print(message)

    def debug(self, title: str, content: object, style: str = "yellow") -> None:
        self._log(title, content, style, LogLevel.DEBUG)

    def info(self, title: str, content: object, style: str = "blue") -> None:
        self._log(title, content, style, LogLevel.INFO)

    def error(self, title: str, content: object, style: str = "red") -> None:
        self._log(title, content, style, LogLevel.ERROR)
