"""Text that model-written code printed, made safe to show on a terminal.

A cell's output, its error and what the kernel logged are the code's own bytes: an escape
sequence in them would reach the user's terminal as a command (OSC 52 sets the clipboard, others
retitle the window, clear the screen or draw a fake prompt). Rich and Textual strip only a few
control characters, so front ends pass such text through `printable` first.
"""

from __future__ import annotations

import re

# ESC sequences: CSI (ESC [ … final), OSC/DCS/SOS/PM/APC strings (to BEL or ST), two-character
# escapes; then the 8-bit C1 forms of CSI, OSC, DCS and the strings.
_SEQUENCE = re.compile(
    r"\x1b\[[0-?]*[ -/]*[@-~]?"
    r"|\x1b[\]PX^_][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -~]?"
    r"|[\x9b][0-?]*[ -/]*[@-~]?"
    r"|[\x90\x98\x9d\x9e\x9f][^\x07\x1b\x9c]*(?:\x07|\x1b\\|\x9c)?"
)
# every other C0 control but tab and newline, DEL and the C1 controls
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """*text* without terminal escape sequences or control characters (tabs and newlines
    stay; a carriage return goes, as Rich and Textual drop it anyway)."""
    if text.isprintable():
        return text
    return _CONTROL.sub("", _SEQUENCE.sub("", text))
