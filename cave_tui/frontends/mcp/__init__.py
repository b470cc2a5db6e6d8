"""`cave mcp`: cave's live namespace served over the Model Context Protocol (stdio).

A front end of the app layer beside `tui`, `repl` and `cli`: it runs cells through
`AppServices.run_python` (as a protocol client's cells, read by the guard), reads the
namespace through the runtime's bounded summaries and runs `/inject` and `/retrieve`
through the command registry. Importing this package (`serve`, `http_socket`) does not
import the `mcp` SDK: `serve` imports it while the runtime starts; `server` and `http`
import it.
"""

from __future__ import annotations

from cave_tui.frontends.mcp.serving import serve

__all__ = ["serve"]
