"""Markdown that streams in with bounded re-rendering: finished blocks freeze, only the tail moves.

Textual's `MarkdownStream` re-parses from the last block and mounts a widget per
block, so a long answer gets slower as it grows (layout visits every block). Here
the answer is a short list of `Static` segments, each rendering a run of complete
Markdown blocks. New text only ever re-renders the last segment (the tail); once
the tail is longer than `FREEZE_CHARS` it is cut at the last safe block boundary
(a blank line outside any code fence, followed by an unindented line), the
finished part freezes and a new tail starts. Work per flush is bounded, so the
total time grows linearly with the answer.
"""

from __future__ import annotations

import re
from typing import ClassVar

from rich.markdown import Heading, Markdown
from textual.containers import VerticalGroup
from textual.widgets import Static

FREEZE_CHARS = 1500
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class _LeftHeading(Heading):
    LEVEL_ALIGN: ClassVar = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class ChatMarkdown(Markdown):
    """Rich Markdown with left-aligned headings and theme-following code colours."""

    elements: ClassVar = {**Markdown.elements, "heading_open": _LeftHeading}

    def __init__(self, markup: str, dark: bool = True) -> None:
        super().__init__(
            markup,
            code_theme="ansi_dark" if dark else "ansi_light",
            inline_code_lexer="python",
            inline_code_theme="ansi_dark" if dark else "ansi_light",
        )


def scan(text: str, start: int = 0) -> tuple[int, int, str | None]:
    """Find where *text* may be cut: (last safe boundary or -1, end of the last line, open fence).

    A safe boundary is where a line begins a new top-level block after a blank line,
    outside a code fence, unindented (so it cannot continue a list item); boundaries
    before *start* are ignored. Only complete lines count. The open fence is the
    fence marker still open at the end of the last complete line (or None).
    """
    fence: str | None = None
    opener: str | None = None
    best = -1
    pos = 0
    prev_blank = False
    for line in text.splitlines(keepends=True):
        if not line.endswith("\n"):
            break
        match = _FENCE.match(line)
        if fence is not None:
            if (
                match
                and match.group(1)[0] == fence[0]
                and len(match.group(1)) >= len(fence)
                and not line[match.end() :].strip()
            ):
                fence = opener = None
            prev_blank = False
        else:
            if prev_blank and line.strip() and line[0] not in " \t" and pos >= start:
                best = pos
            if match:
                fence, opener = match.group(1), line
            prev_blank = not line.strip()
        pos += len(line)
    return best, pos, opener if fence is not None else None


def last_boundary(text: str, start: int = 0) -> int:
    """Offset of the last safe block boundary in *text* (see `scan`), or -1."""
    return scan(text, start)[0]


class MarkdownSegment(Static):
    """A run of complete Markdown blocks (or the live tail)."""

    DEFAULT_CSS = """
    MarkdownSegment { height: auto; }
    """

    def __init__(self, source: str = "", dark: bool = True) -> None:
        super().__init__(ChatMarkdown(source, dark) if source else "")
        self.source = source
        self.dark = dark

    def set_source(self, source: str) -> None:
        self.source = source
        self.update(ChatMarkdown(source, self.dark) if source else "")

    def restyle(self, dark: bool) -> None:
        if dark != self.dark:
            self.dark = dark
            self.set_source(self.source)


class StreamingMarkdown(VerticalGroup):
    """Append-only Markdown document: `append(text)` re-renders the tail segment only."""

    DEFAULT_CSS = """
    StreamingMarkdown { height: auto; }
    """

    def __init__(self, markdown: str = "", *, dark: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.dark = dark
        self._tail = MarkdownSegment("", dark)
        self._raw: list[str] = []
        self._pending_initial = markdown

    def compose(self):  # type: ignore[override]
        yield self._tail

    async def on_mount(self) -> None:
        if self._pending_initial:
            text, self._pending_initial = self._pending_initial, ""
            await self.append(text)

    @property
    def source(self) -> str:
        """The whole document as it was appended."""
        if len(self._raw) > 1:
            self._raw = ["".join(self._raw)]
        return self._raw[0] if self._raw else self._pending_initial

    @property
    def segment_count(self) -> int:
        return len(self.children)

    async def append(self, text: str) -> None:
        """Add *text* at the end; freezes finished blocks when the tail gets long."""
        if not text:
            return
        self._raw.append(text)
        tail_text = self._tail.source + text
        new_segments: list[MarkdownSegment] = []
        current = self._tail
        while len(tail_text) > FREEZE_CHARS:
            window = tail_text[: FREEZE_CHARS * 2]
            cut, line_end, opener = scan(window, start=FREEZE_CHARS // 3)
            carry = ""
            if cut <= 0:
                if len(tail_text) <= FREEZE_CHARS * 2 or line_end <= 0:
                    break
                # One very long block (a huge code fence, a paragraph without blank
                # lines): cut at a line end; a fence is closed here and reopened.
                cut = line_end
                if opener is not None:
                    carry = opener
            head = tail_text[:cut]
            if carry:
                marker = _FENCE.match(carry)
                head += (marker.group(1) if marker else "```") + "\n"
            current.set_source(head)
            tail_text = carry + tail_text[cut:]
            current = MarkdownSegment("", self.dark)
            new_segments.append(current)
        current.set_source(tail_text)
        self._tail = current
        if new_segments:
            await self.mount_all(new_segments)

    def restyle(self, dark: bool) -> None:
        """Re-render with the code colours of a dark or light theme."""
        self.dark = dark
        for segment in self.query_children(MarkdownSegment):
            segment.restyle(dark)
