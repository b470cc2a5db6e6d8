"""The kernel runtime: model code in a separate ipykernel process that can fail safely.

`IPyKernelRuntime` is the public face; the other modules are its parts (see each one's
docstring, and docs/kernel.md for how they fit together).
"""

from __future__ import annotations

from cave_tui.runtime.kernel.cell import CellOutcome
from cave_tui.runtime.kernel.errors import (
    InjectionError,
    KernelDiedError,
    KernelLaunchError,
    SandboxUnavailable,
)
from cave_tui.runtime.kernel.runtime import IPyKernelRuntime
from cave_tui.runtime.shipped.transport import TransferError, UnsafeObjectError

__all__ = [
    "CellOutcome",
    "IPyKernelRuntime",
    "InjectionError",
    "KernelDiedError",
    "KernelLaunchError",
    "SandboxUnavailable",
    "TransferError",
    "UnsafeObjectError",
]
