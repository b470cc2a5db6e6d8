"""The kernel runtime's own errors (the transfer errors live in `transport`, shipped to the
kernel, which needs them too)."""

from __future__ import annotations


class KernelLaunchError(RuntimeError):
    """The kernel could not be started or reached (the message carries its last output)."""


class KernelDiedError(RuntimeError):
    """The kernel died (or stopped answering) while serving a request."""


class InjectionError(TypeError):
    """A value cannot be copied into the kernel; the message says why and what to do."""


class SandboxUnavailable(KernelLaunchError):
    """`sandbox=True` was asked for but bubblewrap cannot run here (the message says why);
    the kernel is never started unsandboxed instead."""
