"""The kernel runtime: model code in a separate ipykernel process that can fail safely.

`IPyKernelRuntime` is the public face; the other modules are its parts (see each one's
docstring). Importing this package loads no kernel machinery beyond the runtime class.
"""

from __future__ import annotations

from cave_tui.runtime.kernel.cell import CellOutcome
from cave_tui.runtime.kernel.runtime import (
    InjectionError,
    IPyKernelRuntime,
    KernelDiedError,
    KernelLaunchError,
    TransferError,
    UnsafeObjectError,
)

__all__ = [
    "CellOutcome",
    "IPyKernelRuntime",
    "InjectionError",
    "KernelDiedError",
    "KernelLaunchError",
    "TransferError",
    "UnsafeObjectError",
]
