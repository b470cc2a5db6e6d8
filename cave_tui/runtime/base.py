"""The runtime interface the agent and the TUI talk to.

Two implementations share it: `IPythonRuntime` (in-process) and
`IPyKernelRuntime` (a separate kernel process). The agent only ever calls what
is declared here, so switching runtimes is one constructor argument.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, Protocol

from cave_tui.runtime.items import Function, Injectable, Type, Variable
from cave_tui.runtime.summary import VarInfo


class SecurityViolationLike(Protocol):
    rule: str
    message: str
    lineno: int | None


class SecurityCheckerLike(Protocol):
    """What a runtime needs from a checker: `check(code)` returns violations."""

    def check(self, code: str) -> list[Any]: ...


SYNTAX_RULE = "SyntaxRule"  # the checker's rule for cells that do not parse


@dataclass
class ExecutionResult:
    """What one cell did. `output` holds stdout, stderr, warnings and displays in order."""

    success: bool
    output: str = ""
    error: str | None = None  # shaped traceback or reason, None on success
    error_type: str | None = None  # e.g. "NameError", "Timeout", "SecurityError"
    changed: list[str] = field(default_factory=list)  # names bound, rebound or mutated
    deleted: list[str] = field(default_factory=list)
    duration: float = 0.0
    timed_out: bool = False
    interrupted: bool = False
    security_violations: list[Any] = field(default_factory=list)
    output_truncated_chars: int = 0  # chars dropped by the runtime's own output cap
    notice: str | None = None  # runtime event the model must know (restart, state loss)

    @property
    def blocked(self) -> bool:
        return bool(self.security_violations)


class RuntimeBusyError(RuntimeError):
    """A previous cell is still running and could not be stopped."""


class Runtime(ABC):
    """Persistent Python namespace that runs model-written cells."""

    security_checker: SecurityCheckerLike | None

    def __init__(
        self,
        variables: list[Variable] | None = None,
        functions: list[Function] | None = None,
        types: list[Type] | None = None,
        security_checker: SecurityCheckerLike | None = None,
    ) -> None:
        self.security_checker = security_checker
        self._injected: dict[str, Injectable] = {}
        for item in [*(functions or []), *(types or []), *(variables or [])]:
            self._injected[item.name] = item

    # -- lifecycle (no-ops for the in-process runtime) -------------------------
    async def start(self) -> None:
        """Start the runtime; idempotent."""

    async def stop(self) -> None:
        """Release the runtime's resources; idempotent."""

    async def __aenter__(self) -> Runtime:
        await self.start()
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.stop()

    # -- the contract --------------------------------------------------------
    @property
    def injected(self) -> dict[str, Injectable]:
        """Items the host injected, by name (descriptions come from here)."""
        return dict(self._injected)

    def descriptions(self) -> dict[str, str]:
        return {n: (i.description or "") for n, i in self._injected.items()}

    @abstractmethod
    def inject(self, item: Injectable) -> None:
        """Bind a Variable/Function/Type in the namespace (replacing a same-named one)."""

    def update_variable(self, name: str, value: Any, description: str | None = None) -> None:
        """Rebind *name* to *value* (upstream's spelling), keeping its injected description."""
        previous = self._injected.get(name)
        if description is None and previous is not None:
            description = previous.description
        self.inject(Variable(name, value, description))

    @abstractmethod
    async def execute(self, code: str, timeout: float | None = None) -> ExecutionResult:
        """Run *code* as one cell. Never raises for errors in the code itself."""

    @abstractmethod
    async def retrieve(self, name: str) -> Any:
        """Return the live object bound to *name*; KeyError if there is none."""

    @abstractmethod
    async def namespace_summary(self) -> list[VarInfo]:
        """Bounded-cost summary of every user-visible name, injected items included."""

    @abstractmethod
    async def delete(self, name: str) -> None:
        """Remove *name* from the namespace; KeyError if absent."""

    @abstractmethod
    async def reset(self) -> None:
        """Clear user state, then re-inject the injected items."""

    @abstractmethod
    async def interrupt(self) -> None:
        """Stop the running cell, if any."""

    async def names(self) -> list[str]:
        return [row.name for row in await self.namespace_summary()]

    def check_security(self, code: str) -> list[Any]:
        if self.security_checker is None:
            return []
        return list(self.security_checker.check(code))

    def blocked_result(self, code: str) -> ExecutionResult | None:
        """The result for a cell the security checker refuses, or None when it may run."""
        violations = self.check_security(code)
        if not violations:
            return None
        if all(getattr(v, "rule", "") == SYNTAX_RULE for v in violations):
            # Code that does not parse is a syntax error, not a refusal: it could not run.
            return ExecutionResult(
                success=False,
                error="SyntaxError: " + "\n".join(str(v) for v in violations),
                error_type="SyntaxError",
            )
        return ExecutionResult(
            success=False,
            error="\n".join(str(v) for v in violations),
            error_type="SecurityError",
            security_violations=violations,
        )

    @property
    def label(self) -> str:
        """Short name for status lines."""
        return type(self).__name__
