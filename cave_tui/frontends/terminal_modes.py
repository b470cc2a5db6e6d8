"""Terminal modes the line-based front ends set for a while, and always put back.

`echo_off`: while `cave --plain` works (between its prompts), text typed ahead is not
echoed into the output; it waits and appears after the next prompt.
It does nothing when standard input is not a terminal.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Iterator


@contextlib.contextmanager
def _cleared(index: int, mask: int) -> Iterator[None]:
    """Within: the bits *mask* of termios field *index* cleared on standard input."""
    import termios

    try:
        fd = sys.stdin.fileno()
        saved = termios.tcgetattr(fd)
        changed = list(saved)
        changed[index] = saved[index] & ~mask
        termios.tcsetattr(fd, termios.TCSANOW, changed)
    except (OSError, ValueError, AttributeError, termios.error):
        yield  # no standard input, or not a terminal
        return
    try:
        yield
    finally:
        with contextlib.suppress(OSError, termios.error):
            termios.tcsetattr(fd, termios.TCSANOW, saved)


@contextlib.contextmanager
def echo_off() -> Iterator[None]:
    """Within: what is typed is not echoed (it waits in the terminal's buffer)."""
    try:
        import termios
    except ImportError:
        yield
        return
    with _cleared(3, termios.ECHO | termios.ECHONL):
        yield
