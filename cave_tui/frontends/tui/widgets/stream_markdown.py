"""Markdown that streams in with bounded re-rendering: finished blocks freeze, only the tail moves.

Textual's `MarkdownStream` re-parses from the last block and mounts a widget per
block, so a long answer gets slower as it grows (layout visits every block). Here
an answer is two widgets: a `FrozenMarkdown` holding every finished block as
pre-rendered lines (rendered once per width, drawn with the line API, so layout
and scrolling cost nothing per block), and a live tail that alone is re-rendered
as text arrives. When the tail is longer than `FREEZE_CHARS` it is cut at the last
safe block boundary (a blank line outside any code fence, followed by an
unindented line); the finished part is rendered once and appended to the frozen
lines. Work per flush is bounded, so total time grows linearly with the answer.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, ClassVar

from rich.markdown import Heading, Markdown
from textual.containers import VerticalGroup
from textual.geometry import Size
from textual.strip import Strip
from textual.widget import Widget
from textual.widgets import Static

from cave_tui.frontends.tui.widgets.marked import Marked
from cave_tui.printable import printable

if TYPE_CHECKING:
    from rich.console import RenderableType
    from textual.app import ComposeResult

FREEZE_CHARS = 1000
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})")


class _LeftHeading(Heading):
    LEVEL_ALIGN: ClassVar = dict.fromkeys(("h1", "h2", "h3", "h4", "h5", "h6"), "left")


class ChatMarkdown(Markdown):
    """Rich Markdown with left-aligned headings and theme-following code colours; every
    Markdown in the chat is drawn through it, so *markup* (an answer, a notice naming a
    variable or a file) is passed through `printable` here: no escape sequence reaches the
    terminal."""

    elements: ClassVar = {**Markdown.elements, "heading_open": _LeftHeading}

    def __init__(self, markup: str, dark: bool = True) -> None:
        super().__init__(
            printable(markup),
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
    """The live tail: re-rendered on every flush (its size is bounded by `FREEZE_CHARS`)."""

    DEFAULT_CSS = """
    MarkdownSegment { height: auto; }
    """

    def __init__(self, source: str = "", dark: bool = True) -> None:
        super().__init__(ChatMarkdown(source, dark) if source else "")
        self.source = source
        self.dark = dark
        self.marked_words: str | None = None  # a search's words, marked where rendered

    def set_source(self, source: str) -> None:
        self.source = source
        if not source:
            self.update("")
            return
        body = ChatMarkdown(source, self.dark)
        self.update(Marked(body, self.marked_words) if self.marked_words else body)

    def mark(self, query: str | None) -> None:
        """Highlight *query* in the rendered text (None: no more)."""
        self.marked_words = query
        self.set_source(self.source)

    def restyle(self, dark: bool) -> None:
        self.dark = dark
        self.set_source(self.source)


class FrozenMarkdown(Widget):
    """Finished Markdown blocks as cached lines: rendered once per width and theme."""

    DEFAULT_CSS = """
    FrozenMarkdown { height: auto; }
    """

    def __init__(self, dark: bool = True) -> None:
        super().__init__()
        self.dark = dark
        self.pieces: list[str] = []
        self._strips: list[Strip] = []
        self._width = -1
        self.marked_words: str | None = None  # a search's words, marked where rendered

    def mark(self, query: str | None) -> None:
        """Highlight *query* in the rendered text (None: no more); drawn again."""
        self.marked_words = query
        self._width = -1
        self.refresh(layout=True)

    def _render_piece(self, source: str, width: int) -> list[Strip]:
        app = self.app
        options = app.console_options.update_width(width).update(highlight=False)
        body: RenderableType = ChatMarkdown(source, self.dark)
        if self.marked_words:
            body = Marked(body, self.marked_words)
        lines = app.console.render_lines(body, options, style=self.rich_style, pad=True)
        return [Strip(line, width) for line in lines]

    def _ensure(self, width: int) -> list[Strip]:
        if width != self._width:
            self._width = width
            self._strips = []
            for piece in self.pieces:
                self._append_strips(piece)
        return self._strips

    def _append_strips(self, piece: str) -> None:
        if self._width <= 0:
            return
        if self._strips:
            self._strips.append(Strip.blank(self._width, self.rich_style))
        self._strips.extend(self._render_piece(piece, self._width))

    def add(self, piece: str) -> None:
        """Freeze *piece* (complete blocks): rendered now, never again at this width."""
        self.pieces.append(piece)
        self._append_strips(piece)
        self.refresh(layout=True)

    def restyle(self, dark: bool) -> None:
        self.dark = dark
        self._width = -1
        self.refresh(layout=True)

    def get_content_height(self, container: Size, viewport: Size, width: int) -> int:
        return len(self._ensure(width))

    def render_line(self, y: int) -> Strip:
        width = self.size.width
        strips = self._ensure(width)
        if 0 <= y < len(strips):
            return strips[y]
        return Strip.blank(width, self.rich_style)


class StreamingMarkdown(VerticalGroup):
    """Append-only Markdown document: `append(text)` re-renders the tail only."""

    DEFAULT_CSS = """
    StreamingMarkdown { height: auto; }
    StreamingMarkdown > FrozenMarkdown { display: none; }
    StreamingMarkdown > FrozenMarkdown.-used { display: block; margin: 0 0 1 0; }
    """

    def __init__(self, markdown: str = "", *, dark: bool = True, id: str | None = None) -> None:
        super().__init__(id=id)
        self.dark = dark
        self.frozen = FrozenMarkdown(dark)
        self._tail = MarkdownSegment("", dark)
        self._raw: list[str] = []
        self._pending_initial = markdown

    def compose(self) -> ComposeResult:
        yield self.frozen
        yield self._tail

    def on_mount(self) -> None:
        if self._pending_initial:
            text, self._pending_initial = self._pending_initial, ""
            self.append(text)

    @property
    def source(self) -> str:
        """The whole document as it was appended."""
        if len(self._raw) > 1:
            self._raw = ["".join(self._raw)]
        return self._raw[0] if self._raw else self._pending_initial

    @property
    def segment_count(self) -> int:
        """Frozen pieces plus the tail."""
        return len(self.frozen.pieces) + 1

    def append(self, text: str) -> None:
        """Add *text* at the end; freezes finished blocks when the tail gets long."""
        if not text:
            return
        self._raw.append(text)
        tail_text = self._tail.source + text
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
            self.frozen.add(head.rstrip("\n"))
            self.frozen.add_class("-used")
            tail_text = carry + tail_text[cut:]
        self._tail.set_source(tail_text)

    def mark(self, query: str | None) -> None:
        """Highlight *query* where the document shows it (None: no more)."""
        self.frozen.mark(query)
        self._tail.mark(query)

    def restyle(self, dark: bool) -> None:
        """Re-render with the code colours of a dark or light theme."""
        self.dark = dark
        self.frozen.restyle(dark)
        self._tail.restyle(dark)
