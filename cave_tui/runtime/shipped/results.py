"""Frame results kept for the table view: a cell whose value is a frame shows in the log
as text, and its log entry opens that frame in the detail view by name.

A result bound to a user name (`df` as the last line) is opened by that name. Any other
frame result (`df.head(50)`, `df.describe()`) is kept in the namespace as `_resultN`
(hidden from the listing, the model and dumps, as every `_` name is), the last
`KEEP_RESULTS` of them only, so kept results never hold more than that many frames alive.

Standard library and frame_window only: the kernel runs this file as `_cave_results`.
"""

from __future__ import annotations

import re
from collections import deque
from typing import Any

from cave_tui.runtime.shipped.frame_window import is_table  # kernel: _cave_frame_window

RESULT_PREFIX = "_result"
KEEP_RESULTS = 10
_KEPT = re.compile(re.escape(RESULT_PREFIX) + r"[1-9][0-9]*")


def is_kept_result(name: str) -> bool:
    """*name* is one the runtime keeps a frame result under (openable though hidden)."""
    return _KEPT.fullmatch(name) is not None


class KeptResults:
    """The frame results of a namespace's cells, each under the name the table opens it by."""

    def __init__(self, ns: dict[str, Any]) -> None:
        self.ns = ns
        self.count = 0
        self.kept: deque[str] = deque()

    def name_for(self, value: Any, visible: Any) -> str | None:
        """The name *value* (a cell's result) opens by: a user name bound to that very
        object (*visible*(name) says a name is the user's), else a new `_resultN` it is
        kept under; None when *value* is no frame."""
        if not is_table(value):
            return None
        for name, bound in list(self.ns.items()):
            if bound is value and visible(name):
                return name
        self.count += 1
        name = f"{RESULT_PREFIX}{self.count}"
        self.ns[name] = value
        self.kept.append(name)
        while len(self.kept) > KEEP_RESULTS:
            self.ns.pop(self.kept.popleft(), None)
        return name

    def clear(self) -> None:
        """Forget every kept result (the namespace was reset)."""
        while self.kept:
            self.ns.pop(self.kept.popleft(), None)
