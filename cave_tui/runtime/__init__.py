"""Runtimes: where model-written code runs, and what the host can inject into them."""

from __future__ import annotations

from typing import Any

from cave_tui.runtime.base import ExecutionResult, Runtime, RuntimeBusyError
from cave_tui.runtime.errors import RuntimeExecutionError
from cave_tui.runtime.items import Function, Type, Variable
from cave_tui.runtime.memory import MemoryUse
from cave_tui.runtime.shipped.summary import VarInfo
from cave_tui.runtime.upstream import CellError, ErrorFeedbackMode, TypeSchemaExtractor

__all__ = [
    "CellError",
    "ErrorFeedbackMode",
    "ExecutionResult",
    "Function",
    "IPyKernelRuntime",
    "IPythonRuntime",
    "MemoryUse",
    "Runtime",
    "RuntimeBusyError",
    "RuntimeExecutionError",
    "Type",
    "TypeSchemaExtractor",
    "VarInfo",
    "Variable",
]


def __getattr__(name: str) -> Any:
    # IPython and jupyter_client load only when a runtime is actually built.
    if name == "IPythonRuntime":
        from cave_tui.runtime.ipython import IPythonRuntime

        return IPythonRuntime
    if name == "IPyKernelRuntime":
        from cave_tui.runtime.kernel import IPyKernelRuntime

        return IPyKernelRuntime
    raise AttributeError(f"module 'cave_tui.runtime' has no attribute {name!r}")
