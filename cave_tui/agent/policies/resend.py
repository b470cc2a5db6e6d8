"""A cell sent again after it failed, and whether its error can pass if it runs again."""

from __future__ import annotations

import re

from cave_tui.agent.turn import CellRecord, Turn, normalize_code
from cave_tui.runtime.base import ExecutionResult

# Errors of the world, not of the code: a service that timed out or refused once, a
# busy resource. FileNotFoundError and its kin are OSErrors that a rerun never fixes.
_PASSING = re.compile(
    r"Timeout|TimedOut|Connection|Temporar|Unavailable|RateLimit|Throttl|TooManyRequests"
    r"|BrokenPipe|ProtocolError|RemoteDisconnected|IncompleteRead|URLError|gaierror"
    r"|BlockingIOError|InterruptedError|ServerError|HTTPError|ReadError|NetworkError"
)
_OS_ERRORS = frozenset({"OSError", "IOError", "EnvironmentError", "error"})


def may_pass(result: ExecutionResult) -> bool:
    """The cell's error can pass on its own: a timeout (the runtime's limit included),
    a connection or network error, a plain OS error."""
    if result.timed_out:
        return True
    kind = (result.error_type or "").rsplit(".", 1)[-1]
    return bool(_PASSING.search(kind)) or kind in _OS_ERRORS


def resent_failure(turn: Turn, code: str) -> CellRecord | None:
    """The cell that failed last, when *code* is the same code sent again."""
    failed = turn.last_failure
    if failed is None or failed.normalized != normalize_code(code):
        return None
    return failed


def same_failures(turn: Turn, code: str) -> int:
    """How many times in a row *code* just failed with the same error type."""
    normalized = normalize_code(code)
    count, kind = 0, None
    for cell in reversed([c for c in turn.cells if c.ran]):
        if not cell.failed or cell.normalized != normalized:
            break
        if kind is not None and cell.result.error_type != kind:
            break
        kind = cell.result.error_type
        count += 1
    return count


def worth_rerunning(turn: Turn, code: str) -> bool:
    """A resend of a cell whose error can pass, which has not yet failed the same way twice."""
    failed = resent_failure(turn, code)
    return failed is not None and may_pass(failed.result) and same_failures(turn, code) < 2
