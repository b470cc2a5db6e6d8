"""Errors a runtime raises for a request it could not carry out (not a cell's own error,
which comes back in its ExecutionResult)."""

from __future__ import annotations


class RuntimeExecutionError(RuntimeError):
    """The runtime could not do what it was asked: bind, inject or run (upstream 0.8's
    name; the kernel runtime's InjectionError is one, so code written for either catches
    it)."""


class RuntimeFailure(RuntimeError):
    """The runtime could not run a cell: its kernel could not start, died, or is still busy
    with the previous cell. The agent tells the model (and the user) as the cell's error
    and the run goes on; any other exception from a runtime's `execute` is a defect, which
    ends the run as upstream 0.8's INTERNAL_ERROR and is raised after its StoppedEvent."""
