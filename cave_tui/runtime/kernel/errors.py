"""The kernel runtime's own errors (the transfer errors live in `transport`, shipped to the
kernel, which needs them too)."""

from __future__ import annotations

from cave_tui.runtime.errors import RuntimeExecutionError, RuntimeFailure


class KernelLaunchError(RuntimeFailure):
    """The kernel could not be started or reached (the message carries its last output)."""


class KernelDiedError(RuntimeFailure):
    """The kernel died (or stopped answering) while serving a request."""


class InjectionError(TypeError, RuntimeExecutionError):
    """A value cannot be copied into the kernel; the message says why and what to do. Both a
    TypeError (upstream 0.8 raises one for a batch it cannot send) and a RuntimeExecutionError
    (0.8's error for one binding)."""


class KernelOutOfMemory(InjectionError):
    """The kernel's memory limit cannot hold an injected value: refused before it was sent
    (*needs* and *limit* in bytes), or the kernel ran out while building it (both None; it
    freed what it had built and still runs)."""

    def __init__(self, message: str, *, needs: int | None = None, limit: int | None = None):
        super().__init__(message)
        self.needs = needs
        self.limit = limit


class NotTransferable(InjectionError):
    """*name*'s value (of type *type_name*) cannot be serialised into another process: a live
    handle such as a connection, an open file, a lock or a native object. *reason* is why."""

    def __init__(self, message: str, *, name: str, type_name: str, reason: str) -> None:
        super().__init__(message)
        self.name = name
        self.type_name = type_name
        self.reason = reason


class SandboxUnavailable(KernelLaunchError):
    """`sandbox=True` was asked for but bubblewrap cannot run here (the message says why);
    the kernel is never started unsandboxed instead."""
