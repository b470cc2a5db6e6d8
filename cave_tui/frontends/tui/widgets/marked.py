"""`Marked`: a Rich renderable drawn with every occurrence of a query highlighted in its
rendered lines (case-insensitive), so a search marks the words of rendered Markdown, not
the whole widget. Only the styles change: the text and the layout stay as rendered."""

from __future__ import annotations

from collections.abc import Iterator

from rich.console import Console, ConsoleOptions, RenderableType
from rich.segment import Segment
from rich.text import Text

HIT_STYLE = "reverse"


class Marked:
    """*inner* with *query* highlighted wherever a rendered line holds it."""

    def __init__(self, inner: RenderableType, query: str) -> None:
        self.inner = inner
        self.query = query

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> Iterator[Segment]:
        lines = console.render_lines(self.inner, options, pad=False, new_lines=False)
        for line in lines:
            yield from marked_line(line, self.query, console)
            yield Segment.line()


def marked_line(line: list[Segment], query: str, console: Console) -> list[Segment]:
    """*line* with each occurrence of *query* (case-insensitive) highlighted."""
    plain = "".join(s.text for s in line if not s.control)
    needle, haystack = query.lower(), plain.lower()
    if not needle or len(haystack) != len(plain) or needle not in haystack:
        return line
    text = Text(end="")
    for segment in line:
        if not segment.control:
            text.append(segment.text, segment.style)
    start = haystack.find(needle)
    while start >= 0:
        text.stylize(HIT_STYLE, start, start + len(needle))
        start = haystack.find(needle, start + len(needle))
    return list(text.render(console, end=""))
