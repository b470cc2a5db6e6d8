"""Text from the kernel (or a model), made safe to show: data, never terminal control or markup.

A cell's output, a repr, a variable or class name, a frame's labels and cells, a
`final_answer` text: all are bytes the code chose. An escape sequence in them would reach
the user's terminal as a command (OSC 52 sets the clipboard, others retitle the window,
clear the screen or draw a fake prompt), and a bidi override would show text in another
order than it is. Rich and Textual strip only a few control characters, so every front end
passes such text through `printable` (the one place that does it) and draws it as a Rich
`Text` (`plain_text`), never as a markup string, which `[/]` would crash.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from rich.text import Text

# ESC sequences: CSI (ESC [ … final), OSC/DCS/SOS/PM/APC strings (to BEL or ST), two-character
# escapes; then the 8-bit C1 forms of CSI, OSC, DCS and the strings.
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
    r"|[\x9b][0-?]*[ -/]*[@-~]?"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
# every other C0 control but tab and newline, DEL, the C1 controls, and the bidi
# embeddings, overrides and isolates (U+202A-U+202E, U+2066-U+2069)
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
_LINE_BREAKS = re.compile(r"[\t\n\u2028\u2029]")


def printable(text: str) -> str:
    """*text* without terminal escape sequences, control characters or bidi overrides (tabs
    and newlines stay; a carriage return goes, as Rich and Textual drop it anyway)."""
    if text.isprintable():
        return text
    return _CONTROL.sub("", _SEQUENCE.sub("", text))


def printable_line(text: str) -> str:
    """`printable(text)` on one line: tabs and line breaks become spaces (a table cell, a title)."""
    return _LINE_BREAKS.sub(" ", printable(text))


def plain_text(text: str, style: str = "", *, one_line: bool = False) -> Text:
    """*text* as a Rich `Text` to draw as it is: `printable`, never read as markup."""
    from rich.text import Text  # not at import: `cave --help` and the CLI load no Rich

    return Text(printable_line(text) if one_line else printable(text), style=style)
