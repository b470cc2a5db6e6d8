"""`StreamingTextParser`: upstream's streaming splitter, kept for code written against it.

Cave's agent does not split the stream: it streams the reply as written (`text`
events, fences included) and extracts the cell from the whole reply afterwards
(`cave_tui.agent.extraction`). This adapter gives upstream's incremental API
(`process_chunk`, `flush`, `is_first_code_block_completed`) with cave's rule for
where a block ends: a closing fence ends it only once the code before it parses,
so a line of backticks inside a string does not cut the cell. If the stream ends
before any later fence makes the code parse, the block ends at its first fence
(upstream's rule) and what follows is text again.
"""

from __future__ import annotations

from enum import Enum

from cave_tui.parsing.cell_syntax import is_cell_code

FENCE = "```"
_DELIMITERS = ("\n", " ", "\r")


class SegmentType(Enum):
    TEXT = "text"
    CODE = "code"


class Segment:
    """A piece of the reply: text as it streamed, or one whole code block (stripped)."""

    def __init__(self, segment_type: SegmentType, content: str) -> None:
        self.type = segment_type
        self.content = content

    def __repr__(self) -> str:
        return f"Segment({self.type.name}, {self.content!r})"


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
        self.first_code_block_completed = False
        self._opening = FENCE + language_identifier
        self._pending = ""  # text that may start a fence, or the open block's code
        self.in_code_block = False

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

    def process_chunk(self, chunk: str) -> list[Segment]:
        self._pending += chunk
        out: list[Segment] = []
        while True:
            before = (self.in_code_block, len(self._pending))
            out.extend(self._code() if self.in_code_block else self._text())
            if (self.in_code_block, len(self._pending)) == before:
                return out

    def flush(self) -> list[Segment]:
        """The rest of the stream: an unclosed block is code, anything else text."""
        out: list[Segment] = []
        if self.in_code_block:
            code = self._pending
            first = code.find(FENCE)
            if first >= 0:  # never parsed: end at the first fence, as upstream does
                code, rest = code[:first], code[first + len(FENCE) :]
                out.append(Segment(SegmentType.CODE, code.strip()))
                self.first_code_block_completed = True
                self.in_code_block = False
                self._pending = rest
                out.extend(self.process_chunk(""))
                out.extend(self.flush())
                return out
            if code.strip():
                out.append(Segment(SegmentType.CODE, code.strip()))
        elif self._pending:
            out.append(Segment(SegmentType.TEXT, self._pending))
        self._pending = ""
        self.in_code_block = False
        return out

    # -- states ----------------------------------------------------------------------
    def _text(self) -> list[Segment]:
        text = self._pending
        start = text.find(self._opening)
        while start >= 0:
            after = start + len(self._opening)
            if after >= len(text):
                break  # the delimiter after the identifier has not arrived yet
            if text[after] in _DELIMITERS:
                self._pending = text[after + 1 :]
                self.in_code_block = True
                return [Segment(SegmentType.TEXT, text[:start])] if start else []
            start = text.find(self._opening, start + 1)  # e.g. ```pythonic: just text
        keep = self._held_back(text)
        ready, self._pending = text[: len(text) - keep], text[len(text) - keep :]
        return [Segment(SegmentType.TEXT, ready)] if ready else []

    def _held_back(self, text: str) -> int:
        """Length of the tail of *text* that may still become an opening fence."""
        start = text.rfind(self._opening)
        if start >= 0 and start + len(self._opening) == len(text):
            return len(self._opening)
        for size in range(min(len(self._opening) - 1, len(text)), 0, -1):
            if self._opening.startswith(text[-size:]):
                return size
        return 0

    def _code(self) -> list[Segment]:
        code = self._pending
        at = code.find(FENCE)
        while at >= 0:
            if is_cell_code(code[:at]):
                self._pending = code[at + len(FENCE) :]
                self.in_code_block = False
                self.first_code_block_completed = True
                return [Segment(SegmentType.CODE, code[:at].strip())]
            at = code.find(FENCE, at + 1)
        return []


__all__ = ["Segment", "SegmentType", "StreamingTextParser"]
