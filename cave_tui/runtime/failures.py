"""The error types a runtime reports for a cell that its own code did not raise."""

from __future__ import annotations

from enum import StrEnum


class RuntimeFailure(StrEnum):
    """`ExecutionResult.error_type`s a runtime sets itself: the cell's code raised none of
    them. Each equals the plain string the runtimes have always reported."""

    TIMEOUT = "Timeout"  # stopped at the time limit
    INTERRUPTED = "Interrupted"  # stopped by the user (or killed when it ignored that)
    MEMORY_LIMIT = "MemoryLimit"  # stopped when the process passed its memory limit
    KERNEL_DIED = "KernelDied"  # its kernel died (or stopped answering) while it ran
    STOPPED = "Stopped"  # the runtime was stopped while it ran
    RUNTIME_BUSY = "RuntimeBusy"  # never started: an earlier cell still holds the runtime
    KERNEL_UNAVAILABLE = "KernelUnavailable"  # never started: no kernel to run it

    @property
    def started(self) -> bool:
        """False when the cell never began to run."""
        return self not in (RuntimeFailure.RUNTIME_BUSY, RuntimeFailure.KERNEL_UNAVAILABLE)
