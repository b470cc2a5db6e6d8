"""`cave acp`: cave as an Agent Client Protocol agent (stdio), for Zed, Toad, JetBrains, ….

A front end of the app layer beside `tui`, `repl`, `cli` and `mcp`: sessions are cave
conversations on the one live namespace, prompts are turns of cave's agent (`services.stream`),
cells are tool calls, approval mode asks through permission requests, cancel interrupts the
cell. Importing this package does not import the `acp` SDK: `serve` imports it while the
runtime starts.
"""

from __future__ import annotations

from cave_tui.frontends.acp.server import serve

__all__ = ["serve"]
