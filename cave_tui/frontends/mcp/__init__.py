"""`cave mcp`: cave's live namespace served over the Model Context Protocol (stdio).

A front end of the app layer beside `tui`, `repl` and `cli`: it runs cells through
`AppServices.run_python` (as a protocol client's cells, read by the guard), reads the
namespace through the runtime's bounded summaries and runs `/inject` and `/retrieve`
through the command registry. Importing it imports the `mcp` SDK (the CLI imports it lazily).
"""

from __future__ import annotations

from cave_tui.frontends.mcp.server import build_server, serve

__all__ = ["build_server", "serve"]
