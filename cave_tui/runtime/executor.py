"""Upstream's `cave_agent.runtime.executor`: `ExecutionResult`, `ErrorFeedbackMode`,
`IPythonExecutor` and `check_security` (0.7), and `RuntimeExecutionError` (0.8, where 0.8's
code imports it from), under the module path upstream code imports.

Cave has no separate executor layer: a runtime runs its cells itself. `IPythonExecutor`
is an `IPythonRuntime` seen through upstream's executor methods, so code (and tests)
that build one directly keep working.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.errors import RuntimeExecutionError
from cave_tui.runtime.upstream import ErrorFeedbackMode

if TYPE_CHECKING:  # pragma: no cover
    from cave_tui.runtime.ipython import IPythonRuntime


def check_security(checker: Any, code: str) -> ExecutionResult | None:
    """The refused result when *checker* finds violations in *code*, else None (upstream)."""
    if not checker:
        return None
    check = getattr(checker, "check_code", None) or checker.check
    violations = list(check(code))
    if not violations:
        return None
    error_for = getattr(checker, "error_for", None)
    text = "\n".join(str(v) for v in violations)
    return ExecutionResult(
        success=False,
        error=error_for(violations) if callable(error_for) else RuntimeError(text),
        error_text=text,
        error_type="SecurityError",
        security_violations=violations,
    )


class IPythonExecutor:
    """Upstream's in-process executor: runs cells in an `IPythonRuntime` of its own."""

    def __init__(
        self,
        security_checker: Any = None,
        error_feedback_mode: ErrorFeedbackMode = ErrorFeedbackMode.PLAIN,
    ) -> None:
        from cave_tui.runtime.ipython import IPythonRuntime

        self.runtime: IPythonRuntime = IPythonRuntime(
            security_checker=security_checker, error_feedback_mode=error_feedback_mode
        )

    def inject_into_namespace(self, name: str, value: Any) -> None:
        """Bind *value* to *name* in the namespace, without describing it (upstream)."""
        self.runtime.shell.user_ns[name] = value

    async def execute(self, code: str, timeout: float | None = None) -> ExecutionResult:
        """Run *code* as one cell; a refused cell's `error` is the checker's SecurityError."""
        return await self.runtime.execute(code, timeout)

    async def get_from_namespace(self, name: str) -> Any:
        """The value bound to *name*, None when there is none (0.7's executor; the 0.8
        runtime's `get_from_namespace` raises KeyError instead)."""
        try:
            return await self.runtime.get_from_namespace(name)
        except KeyError:
            return None

    async def reset(self) -> None:
        """Clear the namespace."""
        await self.runtime.reset()


__all__ = [
    "ErrorFeedbackMode",
    "ExecutionResult",
    "IPythonExecutor",
    "RuntimeExecutionError",
    "check_security",
]
