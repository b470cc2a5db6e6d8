"""A value whose pickling waits until the test releases it (at most `WAIT` seconds): a
snapshot that writes it is slow for as long as the test wants."""

from __future__ import annotations

import threading

WAIT = 8.0
RELEASE = threading.Event()


class SlowPickle:
    """Pickles at once the first *fast* times (a snapshot's digest of it), then only once
    `RELEASE` is set, or after `WAIT` seconds (its write)."""

    def __init__(self, fast: int = 1) -> None:
        self.fast = fast

    def __reduce__(self) -> tuple[type, tuple[int]]:
        if self.fast > 0:
            self.fast -= 1
        else:
            RELEASE.wait(WAIT)
        return (SlowPickle, (0,))
