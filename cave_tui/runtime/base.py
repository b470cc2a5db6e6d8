"""The runtime interface the agent and the TUI talk to.

Two implementations share it: `IPythonRuntime` (in-process) and
`IPyKernelRuntime` (a separate kernel process). The agent only ever calls what
is declared here, so switching runtimes is one constructor argument.
"""

from __future__ import annotations

import functools
import inspect
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any, Protocol

from cave_tui.runtime.detail import Detail, object_detail
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


@dataclass(frozen=True)
class NamespaceChange:
    """What a runtime call did to the namespace: names bound or mutated, names removed.

    `everything` means anything may have changed (a reset, a restart, an interrupted cell).
    """

    changed: tuple[str, ...] = ()
    deleted: tuple[str, ...] = ()
    everything: bool = False


NamespaceListener = Callable[[NamespaceChange], None]
OutputListener = Callable[[str], None]  # a running cell's output, chunk by chunk, any thread


def execute_streaming(
    runtime: Any, code: str, timeout: float | None, on_output: OutputListener
) -> Awaitable[ExecutionResult]:
    """`runtime.execute(code, timeout)`, streaming its output to *on_output* when it can.

    A runtime written to upstream's interface (`execute(code, timeout)`) runs unchanged:
    the keyword is passed only to an `execute` that accepts it.
    """
    if _accepts_on_output(type(runtime).execute):
        return runtime.execute(code, timeout=timeout, on_output=on_output)
    return runtime.execute(code, timeout=timeout)


@functools.cache
def _accepts_on_output(execute: Callable[..., Any]) -> bool:
    try:
        parameters = inspect.signature(execute).parameters
    except (TypeError, ValueError):
        return False
    return "on_output" in parameters or any(
        p.kind is inspect.Parameter.VAR_KEYWORD for p in parameters.values()
    )


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
        self._namespace_listeners: list[NamespaceListener] = []
        items: list[Injectable] = [*(functions or []), *(types or []), *(variables or [])]
        for item in items:
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

    # -- change notification ---------------------------------------------------
    def add_namespace_listener(self, listener: NamespaceListener) -> Callable[[], None]:
        """Call *listener* after every namespace change; returns the function that unsubscribes.

        Every path that changes the namespace goes through the runtime (a cell, however it
        ended, inject, delete, reset, a restart), so a front end that listens here never
        misses one. Listeners are called from any thread and must be quick and thread-safe.
        """
        listeners = self.__dict__.setdefault("_namespace_listeners", [])
        listeners.append(listener)
        return lambda: listeners.remove(listener) if listener in listeners else None

    def namespace_changed(self, change: NamespaceChange) -> None:
        """Tell the listeners about *change* (a failing listener is ignored)."""
        for listener in list(self.__dict__.get("_namespace_listeners", ())):
            try:
                listener(change)
            except Exception:
                pass

    def result_changed(self, result: ExecutionResult) -> None:
        """`namespace_changed` for a finished cell (an interrupted one may have changed all)."""
        self.namespace_changed(
            NamespaceChange(
                tuple(result.changed), tuple(result.deleted), everything=result.interrupted
            )
        )

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
    async def execute(
        self, code: str, timeout: float | None = None, *, on_output: OutputListener | None = None
    ) -> ExecutionResult:
        """Run *code* as one cell. Never raises for errors in the code itself.

        *on_output* receives the cell's output as it is written (from any thread), before
        the cell ends; the result's `output` holds all of it (bounded) as before.
        """

    @abstractmethod
    async def retrieve(self, name: str) -> Any:
        """Return the live object bound to *name*; KeyError if there is none."""

    async def detail(self, name: str) -> Detail:
        """The detail view of *name* (bounded cost), computed where the object lives."""
        import asyncio

        obj = await self.retrieve(name)
        return await asyncio.to_thread(object_detail, name, obj)

    @abstractmethod
    async def namespace_summary(self) -> list[VarInfo]:
        """Bounded-cost summary of every user-visible name, injected items included."""

    async def namespace_listing(self) -> list[VarInfo]:
        """Every user-visible name, described (the inspector's list: no cap on the count).

        `namespace_summary()` stays bounded for the prompt, dumps and snapshots; a runtime
        lists names past its bound here, the far ones by type only when time runs short.
        """
        return await self.namespace_summary()

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
