"""`StreamingTextParser`: upstream's streaming splitter, kept for code written against it.

Cave's agent does not split the stream: it streams the reply as written (`text`
events, fences included) and extracts the cell from the whole reply afterwards
(`cave_tui.agent.extraction`). This adapter gives upstream's incremental API
(`process_chunk`, `flush`, `is_first_code_block_completed`, 0.8's `remainder`).

Where a block starts: ```` ```python ```` in any case. At the start of a line (up to
three spaces before it) the rest of its line is an info string, dropped; inside a
sentence it opens a block only when nothing else follows it on its line. Where a
block ends: a line whose first non-blank characters are ```` ``` ````, once the code
before it parses (cave's rule, so backticks inside a string do not cut the cell); a
fence indented at most three spaces also ends code that does not parse, unless the
fence sits inside a string still open (the model then gets the SyntaxError). A block
with no code is not a block: its fences come out as text. The code comes out dedented.
If the stream ends inside a block, the block ends at its first fence line (0.7's rule),
or is all code.

The two generations feed it differently. 0.8's caller stops at the first block and
reads what followed it from `remainder`; 0.7's caller keeps feeding and reads every
segment. So a call that completes a block stops there, keeping the rest of its chunk
in `remainder`; the next call's chunk is kept there too and nothing is parsed; a
caller that feeds once more (or flushes) is reading on, and parsing resumes with
the kept text, as 0.7 parsed it.
"""

from __future__ import annotations

import textwrap
from enum import Enum

from cave_tui.parsing.cell_syntax import ends_inside_string, is_cell_code

FENCE = "```"
MAX_FENCE_INDENT = 3  # Markdown's: a fence may be indented up to three spaces


class SegmentType(Enum):
    TEXT = "text"
    CODE = "code"


class Segment:
    """A piece of the reply: text as it streamed, or one whole code block (dedented)."""

    def __init__(self, segment_type: SegmentType, content: str) -> None:
        self.type = segment_type
        self.content = content

    def __repr__(self) -> str:
        return f"Segment({self.type.name}, {self.content!r})"


def _indent_after(indent: int | None, text: str) -> int | None:
    """Spaces since the last line break after *text*, when the line holds nothing else
    and could still start a fence; None once it cannot."""
    if "\n" in text:
        indent, text = 0, text.rsplit("\n", 1)[1]
    if indent is None or text.strip(" "):
        return None
    indent += len(text)
    return indent if indent <= MAX_FENCE_INDENT else None


def _finished(code: str) -> str:
    return textwrap.dedent(code).strip()


class StreamingTextParser:
    """Text is passed on as it arrives; a code block comes out whole when its fence closes."""

    TRIPLE_BACKTICK_COUNT = 3

    class Mode(Enum):
        """Upstream's parser states; this parser is only ever in TEXT or CODE."""

        TEXT = "text"
        BACKTICK_COUNT = "backtick_count"
        LANGUAGE_MATCH = "language_match"
        CODE = "code"
        CODE_END_CHECK = "code_end_check"

    def __init__(self, language_identifier: str = "python") -> None:
        self.language_identifier = language_identifier
        self._tag = (FENCE + language_identifier).lower()
        self._reset()

    def _reset(self) -> None:
        self.first_code_block_completed = False
        self.in_code_block = False
        self.remainder = ""  # what followed the completed block, not parsed (0.8's)
        self._pending = ""  # text that may start a fence, or the open block's code
        self._opening = ""  # the open block's fence line, as written
        self._scanned = 0  # the open block's code before this offset holds no closing fence
        self._line_indent: int | None = 0  # of the text passed on (see `_indent_after`)
        self._stopped = False  # a call completed a block; parsing waits
        self._held_a_call = False  # a call came after the stop and was kept in `remainder`

    def is_first_code_block_completed(self) -> bool:
        return self.first_code_block_completed

    # -- upstream's view of the state (read-only) --------------------------------------
    @property
    def mode(self) -> StreamingTextParser.Mode:
        """CODE inside a block, else TEXT."""
        return self.Mode.CODE if self.in_code_block else self.Mode.TEXT

    @property
    def text_buffer(self) -> str:
        """Text held back because it may still open a fence ("" inside a block)."""
        return "" if self.in_code_block else self._pending

    @property
    def code_buffer(self) -> str:
        """The open block's code so far ("" outside a block)."""
        return self._pending if self.in_code_block else ""

    @property
    def backtick_count(self) -> int:
        """Backticks at the end of the held-back text (a fence in the making)."""
        held = self.text_buffer
        return len(held) - len(held.rstrip("`"))

    # -- feeding -----------------------------------------------------------------------
    def process_chunk(self, chunk: str) -> list[Segment]:
        """Segments of *chunk*, up to the end of a block it completes (the rest goes to
        `remainder`). After that stop, one more call's chunk is kept in `remainder` and
        gives nothing; a call after it parses the kept text and its own chunk."""
        if self._stopped:
            if not self._held_a_call:
                self.remainder += chunk
                self._held_a_call = True
                return []
            chunk, self.remainder = self.remainder + chunk, ""
            self._stopped = False
        self._pending += chunk
        return self._parse(stop_at_block=True)

    def flush(self) -> list[Segment]:
        """The rest of the stream, `remainder` included: every block in it, an unclosed
        block as code, anything else as text. The parser is then as new."""
        if self._stopped:
            self._pending, self.remainder = self.remainder, ""
            self._stopped = False
        out = self._parse(stop_at_block=False)
        while self.in_code_block:  # the stream ended inside a block
            out.extend(self._end_open_block())
            out.extend(self._parse(stop_at_block=False))
        if self._pending:
            out.append(Segment(SegmentType.TEXT, self._pending))
        self._reset()
        return out

    def _parse(self, *, stop_at_block: bool) -> list[Segment]:
        out: list[Segment] = []
        while True:
            before = (self.in_code_block, len(self._pending))
            if self.in_code_block:
                if self._code(out) and stop_at_block:
                    self.remainder, self._pending = self._pending, ""
                    self._stopped, self._held_a_call = True, False
                    return out
            else:
                self._text(out)
            if (self.in_code_block, len(self._pending)) == before:
                return out

    # -- text --------------------------------------------------------------------------
    def _emit_text(self, out: list[Segment], text: str) -> None:
        if text:
            out.append(Segment(SegmentType.TEXT, text))
            self._line_indent = _indent_after(self._line_indent, text)

    def _text(self, out: list[Segment]) -> None:
        text = self._pending
        start = text.find(FENCE)
        while start >= 0:
            opens = self._opens_at(text, start)
            if opens is None:  # not decided until more text comes
                self._emit_text(out, text[:start])
                self._pending = text[start:]
                return
            if opens:
                line_end = text.index("\n", start) + 1
                self._emit_text(out, text[:start])
                self._opening, self._pending = text[start:line_end], text[line_end:]
                self.in_code_block, self._scanned = True, 0
                return
            start = text.find(FENCE, start + 1)
        keep = self._held_back(text)
        self._emit_text(out, text[: len(text) - keep])
        self._pending = text[len(text) - keep :]

    def _opens_at(self, text: str, start: int) -> bool | None:
        """Whether the ``` at *start* opens a block; None while it cannot be told yet."""
        if start and text[start - 1] == "`":
            return False  # inside a longer run of backticks
        tag_end = start + len(self._tag)
        head = text[start:tag_end].lower()
        if head != self._tag:
            return None if self._tag.startswith(head) and tag_end > len(text) else False
        line_end = text.find("\n", tag_end)
        rest = text[tag_end:] if line_end < 0 else text[tag_end:line_end]
        if rest and not rest[0].isspace():
            return False  # ```pythonic
        at_line_start = _indent_after(self._line_indent, text[:start]) is not None
        if not at_line_start and rest.strip():
            return False  # "wrap code in ```python fences": prose about a fence
        return None if line_end < 0 else True

    def _held_back(self, text: str) -> int:
        """Length of the tail of *text* that may still become an opening fence."""
        run = len(text) - len(text.rstrip("`"))
        for size in range(min(len(self._tag) - 1, len(text)), run, -1):
            if self._tag.startswith(text[-size:].lower()):
                return size
        return run

    # -- code --------------------------------------------------------------------------
    def _code(self, out: list[Segment]) -> bool:
        """Look for the open block's closing fence; True when it closed a block."""
        code = self._pending
        at = code.find(FENCE, self._scanned)
        while at >= 0:
            line_start = code.rfind("\n", 0, at) + 1
            indent = code[line_start:at]
            body = code[:line_start]
            if not indent.strip() and self._closes(body, indent):
                self.in_code_block = False
                self._pending = code[at + len(FENCE) :]
                self._line_indent = None  # just past a fence: mid-line
                if not body.strip():  # no code: not a block, its fences are text
                    out.append(Segment(SegmentType.TEXT, self._opening + code[: at + len(FENCE)]))
                    return False
                out.append(Segment(SegmentType.CODE, _finished(body)))
                self.first_code_block_completed = True
                return True
            self._scanned = at + 1
            at = code.find(FENCE, at + 1)
        return False

    @staticmethod
    def _closes(body: str, indent: str) -> bool:
        """Whether a fence line after the code *body* ends the block."""
        code = textwrap.dedent(body)
        if not code.strip() or is_cell_code(code):
            return True
        return len(indent) <= MAX_FENCE_INDENT and not ends_inside_string(code)

    def _end_open_block(self) -> list[Segment]:
        """The stream ended inside a block: it ends at its first fence line (as
        upstream's 0.7 parser), or is all code; a block with no code is text."""
        code, at = self._pending, self._pending.find(FENCE)
        while at >= 0 and code[code.rfind("\n", 0, at) + 1 : at].strip():
            at = code.find(FENCE, at + 1)
        body, rest = (code, "") if at < 0 else (code[:at], code[at + len(FENCE) :])
        self.in_code_block, self._pending, self._line_indent = False, rest, None
        if not body.strip():
            return [Segment(SegmentType.TEXT, self._opening + code[: len(code) - len(rest)])]
        self.first_code_block_completed = True
        return [Segment(SegmentType.CODE, _finished(body))]


__all__ = ["Segment", "SegmentType", "StreamingTextParser"]
