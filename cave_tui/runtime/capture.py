"""Capturing a cell's output without touching the host's streams for long.

`OutputCapture` keeps a bounded head and tail of everything written, so a cell
that prints 100 MB costs at most a few hundred KB of memory. `routed_streams`
installs a per-thread router on `sys.stdout`/`sys.stderr`: writes from the cell's
thread go to its capture, writes from any other thread (the TUI, the host) go
where they always went, and the original streams are restored when the last
cell ends.
"""

from __future__ import annotations

import re
import sys
import threading
import warnings
from collections import deque
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any, TextIO

DEFAULT_CAPTURE_CHARS = 200_000
# What stands for the characters a capture drops (the kernel's bootstrap writes the same).
DROPPED_MARKER = "\n[… {n:,} characters of output dropped …]\n"
DROPPED_MARKER_RE = re.compile(r"\n\[… [\d,]+ characters of output dropped …\]\n")


class OutputCapture:
    """A text sink that keeps the first and last *limit* characters.

    *on_write* (optional) also receives every write as it happens, on the writer's thread
    (a front end streams a running cell's output from there); its failures are ignored.
    """

    def __init__(
        self, limit: int = DEFAULT_CAPTURE_CHARS, on_write: Callable[[str], Any] | None = None
    ) -> None:
        self.limit = limit
        self.on_write = on_write
        self._head: list[str] = []
        self._head_len = 0
        self._tail: deque[str] = deque()
        self._tail_len = 0
        self.total = 0
        self._lock = threading.Lock()

    def write(self, text: object) -> int:
        """Keep *text* (a cell may write anything to sys.stdout: it is kept as its str)."""
        if not isinstance(text, str):
            text = str(text)
        original = text
        n = len(text)
        with self._lock:
            self.total += n
            room = self.limit - self._head_len
            if room > 0:
                part = text[:room]
                self._head.append(part)
                self._head_len += len(part)
                text = text[room:]
            if text:
                self._tail.append(text[-self.limit :])
                self._tail_len += min(len(text), self.limit)
                while self._tail and self._tail_len - len(self._tail[0]) >= self.limit:
                    self._tail_len -= len(self._tail.popleft())
        if self.on_write is not None and n:
            try:
                self.on_write(original)
            except Exception:
                pass
        return n

    @property
    def dropped(self) -> int:
        """Characters neither in the head nor the tail."""
        kept = self._head_len + min(self._tail_len, self.limit)
        return max(self.total - kept, 0)

    def getvalue(self) -> str:
        with self._lock:
            head = "".join(self._head)
            tail = "".join(self._tail)
            if len(tail) > self.limit:
                tail = tail[-self.limit :]
            dropped = self.total - len(head) - len(tail)
        if dropped > 0:
            return head + DROPPED_MARKER.format(n=dropped) + tail
        return head + tail


class _Router:
    """File-like object that sends each thread's writes to that thread's sink."""

    def __init__(self, fallback: TextIO) -> None:
        self.fallback = fallback

    def _target(self) -> Any:
        return _sinks.get(threading.get_ident(), self.fallback)

    def write(self, text: str) -> int:
        return self._target().write(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def flush(self) -> None:
        target = self._target()
        if hasattr(target, "flush"):
            target.flush()

    def isatty(self) -> bool:
        return False

    @property
    def encoding(self) -> str:
        return getattr(self.fallback, "encoding", "utf-8") or "utf-8"

    def fileno(self) -> int:
        return self.fallback.fileno()

    def __getattr__(self, name: str) -> Any:
        return getattr(self.fallback, name)


_sinks: dict[int, Any] = {}
_lock = threading.Lock()
_active = 0
_saved: tuple[Any, Any, Any] | None = None
_routers: tuple[_Router, _Router] | None = None


def _show_warning(
    message: Any, category: Any, filename: str, lineno: int, file: Any = None, line: Any = None
) -> None:
    """`warnings.showwarning` that sends a cell thread's warnings to its capture."""
    sink = _sinks.get(threading.get_ident())
    if sink is None:
        # _showwarning_orig: CPython's own showwarning, private so not in typeshed.
        previous = _saved[2] if _saved is not None else warnings._showwarning_orig  # type: ignore[attr-defined]
        previous(message, category, filename, lineno, file, line)
        return
    sink.write(warnings.formatwarning(message, category, filename, lineno, line))


@contextmanager
def routed_streams(sink: Any) -> Iterator[None]:
    """Send this thread's stdout/stderr writes to *sink* while the block runs."""
    global _active, _saved, _routers
    ident = threading.get_ident()
    with _lock:
        if _active == 0:
            _saved = (sys.stdout, sys.stderr, warnings.showwarning)
            _routers = (_Router(sys.stdout), _Router(sys.stderr))
            sys.stdout, sys.stderr = _routers
            warnings.showwarning = _show_warning
        elif _routers is not None and (
            sys.stdout is not _routers[0] or sys.stderr is not _routers[1]
        ):
            # Someone swapped the streams while an earlier cell still runs (a cell stuck in
            # C that no interrupt reaches, then a test runner's capture): route again, in
            # front of the current streams, or this cell's output would bypass its capture.
            _routers = (_Router(sys.stdout), _Router(sys.stderr))
            sys.stdout, sys.stderr = _routers
        _active += 1
        previous = _sinks.get(ident)
        _sinks[ident] = sink
    try:
        yield
    finally:
        with _lock:
            if previous is None:
                _sinks.pop(ident, None)
            else:
                _sinks[ident] = previous
            _active -= 1
            if _active == 0 and _saved is not None and _routers is not None:
                # Restore only what we replaced; if someone swapped the streams
                # meanwhile, put their streams back behind ours.
                if sys.stdout is _routers[0]:
                    sys.stdout = _routers[0].fallback  # what was there when it was put in
                if sys.stderr is _routers[1]:
                    sys.stderr = _routers[1].fallback
                if warnings.showwarning is _show_warning:
                    warnings.showwarning = _saved[2]
                _saved = _routers = None


def sanitize_surrogates(text: str) -> str:
    """*text* as valid Unicode: a surrogate pair joined into its character, a lone surrogate
    (a cell can print one; no UTF-8 encoder, JSON request or log file takes it) replaced by
    U+FFFD (upstream 0.8's `cave_agent.utils.sanitize_surrogates`)."""
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return text.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return text
