"""Errors a runtime raises for a request it could not carry out (not a cell's own error,
which comes back in its ExecutionResult)."""

from __future__ import annotations


class RuntimeExecutionError(RuntimeError):
    """The runtime could not do what it was asked: bind, inject or run (upstream 0.8's
    name; the kernel runtime's InjectionError is one, so code written for either catches
    it)."""
