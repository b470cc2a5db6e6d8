"""The `cave` process's standard streams: closed ones, and a reader that goes away.

`prepare_standard_streams` runs first thing: a standard descriptor the parent closed
(`cave --plain <&-`) is reopened on /dev/null, so no file cave opens later takes its number
(and is read or written as stdin or stdout by mistake), and the front ends can tell that
there is nothing to read. stdout and stderr then drop their writes once their reader has
gone (`cave run … | head -1`): the first `BrokenPipeError` points the descriptor at
/dev/null (Python's documented idiom), so the turn, its record and its dump go on as if
the output had been read.
"""

from __future__ import annotations

import errno
import io
import os
import sys
from typing import BinaryIO, TextIO

STANDARD_FDS = (0, 1, 2)
_closed: set[int] = set()  # the standard descriptors found closed at start


def _reopen_on_devnull(fd: int) -> None:
    spare = os.open(os.devnull, os.O_RDONLY if fd == 0 else os.O_WRONLY)
    if spare != fd:
        os.dup2(spare, fd)
        os.close(spare)


def _is_closed(fd: int) -> bool:
    try:
        os.fstat(fd)
    except OSError as exc:
        return exc.errno == errno.EBADF
    return False


class PipeSafeStream(io.TextIOBase):
    """A text stream that drops its writes, quietly, once its reader has gone."""

    def __init__(self, inner: TextIO) -> None:
        super().__init__()
        self.inner = inner
        self.reader_gone = False

    def _gone(self) -> None:
        """The reader closed the pipe: point the descriptor at /dev/null (what was buffered
        for it is then flushed there), and drop every later write."""
        self.reader_gone = True
        try:
            _reopen_on_devnull(self.inner.fileno())
        except (OSError, ValueError):
            pass

    def write(self, text: str) -> int:
        if not self.reader_gone:
            try:
                self.inner.write(text)
            except BrokenPipeError:
                self._gone()
        return len(text)

    def flush(self) -> None:
        if not self.reader_gone:
            try:
                self.inner.flush()
            except BrokenPipeError:
                self._gone()

    def fileno(self) -> int:
        return self.inner.fileno()

    def isatty(self) -> bool:
        return self.inner.isatty()

    def writable(self) -> bool:
        return True

    @property
    def buffer(self) -> BinaryIO:  # for writers that encode themselves (prompt_toolkit)
        return self.inner.buffer

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return self.inner.encoding

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return self.inner.errors


def prepare_standard_streams() -> None:
    """Reopen closed standard descriptors on /dev/null; make stdout and stderr pipe-safe."""
    for fd in STANDARD_FDS:
        if _is_closed(fd):
            _closed.add(fd)
            _reopen_on_devnull(fd)
    if sys.stdin is None:
        sys.stdin = open(0, encoding="utf-8", closefd=False)  # noqa: SIM115 (the process's)
    for name in ("stdout", "stderr"):
        stream = getattr(sys, name)
        if stream is None:
            stream = open(STANDARD_FDS[1 if name == "stdout" else 2], "w", closefd=False)  # noqa: SIM115
        if not isinstance(stream, PipeSafeStream):
            setattr(sys, name, PipeSafeStream(stream))


def stdin_was_closed() -> bool:
    """Whether cave started with its standard input closed (nothing to read)."""
    return 0 in _closed
