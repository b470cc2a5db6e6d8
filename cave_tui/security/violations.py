"""What a check reports: one `SecurityViolation` per offending node, and `SecurityError`."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass


@dataclass
class SecurityViolation:
    """One reason a cell may not run.

    `lineno` and `col` point into the code as the model wrote it (1-based, like an editor);
    `col_offset` is the same column 0-based, as in the `ast` module.
    """

    message: str
    rule: str = "SecurityRule"
    lineno: int | None = None
    col: int | None = None

    @property
    def col_offset(self) -> int | None:
        return None if self.col is None else self.col - 1

    def __str__(self) -> str:
        where = ""
        if self.lineno is not None:
            where = f"line {self.lineno}"
            if self.col is not None:
                where += f", col {self.col}"
            where += ": "
        return f"{where}{self.message} [{self.rule}]"


class SecurityError(Exception):
    """Raised by `SecurityChecker.enforce` (and by hosts) when code fails the checks."""

    def __init__(self, message: str | Iterable[SecurityViolation]) -> None:
        if isinstance(message, str):
            self.violations: list[SecurityViolation] = []
            self.message = message
        else:
            self.violations = list(message)
            self.message = "\n".join(str(v) for v in self.violations) or "security check failed"
        super().__init__(self.message)
