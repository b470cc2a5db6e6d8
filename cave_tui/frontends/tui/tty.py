"""Keep what is typed while the app loads: the terminal leaves cooked mode at once.

Until Textual starts (a second or two of imports), the terminal is in cooked mode: the
line discipline turns Enter into "\\n", which the app would read as Ctrl+J (a new line,
not a send). Switching off ICRNL and canonical mode first thing keeps Enter as Enter;
the terminal's own settings are put back when the process exits.
"""

from __future__ import annotations

import atexit
import sys
from typing import Any


def hold_typed_input() -> None:
    """Stop the tty translating Enter and echoing keys until the app reads them."""
    if not sys.stdin.isatty():
        return
    import termios

    fd = sys.stdin.fileno()
    try:
        before = termios.tcgetattr(fd)
        attrs = termios.tcgetattr(fd)
        attrs[0] &= ~termios.ICRNL
        attrs[3] &= ~(termios.ICANON | termios.ECHO)
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
    except termios.error:
        return
    _HELD.append((fd, before))
    atexit.register(_restore, fd, before)


_HELD: list[tuple[int, list[Any]]] = []  # what `hold_typed_input` changed, to put back


def restore_typed_input() -> None:
    """Put the terminal's settings back now (before an `os._exit`, which runs no atexit)."""
    for fd, attrs in _HELD:
        _restore(fd, attrs)


def _restore(fd: int, attrs: list[Any]) -> None:
    """Put back the attributes `termios.tcgetattr` read (a list of ints and a list of bytes)."""
    import termios

    try:
        termios.tcsetattr(fd, termios.TCSANOW, attrs)
    except termios.error:
        pass
