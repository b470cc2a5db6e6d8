"""Slash commands: one headless registry shared by every front end.

Command modules (`builtin`, `data`, …) register into `registry` when imported;
`load_commands()` imports them all.
"""

from __future__ import annotations

import importlib

from cave_tui.app.commands.registry import (
    Command,
    CommandContext,
    CommandError,
    CommandRegistry,
    registry,
)

__all__ = [
    "Command",
    "CommandContext",
    "CommandError",
    "CommandRegistry",
    "load_commands",
    "registry",
]

COMMAND_MODULES = ("builtin", "data", "settings")


def load_commands() -> CommandRegistry:
    """Import every command module (each registers its commands once) and return the registry."""
    for name in COMMAND_MODULES:
        try:
            importlib.import_module(f"cave_tui.app.commands.{name}")
        except ModuleNotFoundError as exc:
            if exc.name != f"cave_tui.app.commands.{name}":
                raise
    return registry
