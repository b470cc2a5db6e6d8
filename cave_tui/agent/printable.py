"""Moved to `cave_tui.printable` (the front ends use it without the agent loop); kept so
existing imports work."""

from cave_tui.printable import plain_text, printable, printable_line

__all__ = ["plain_text", "printable", "printable_line"]
