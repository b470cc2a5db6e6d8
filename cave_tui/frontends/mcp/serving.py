"""`cave mcp`'s session lifecycle (`app.protocol_server`, shared with `cave acp`), around the
server of `server.build_server` on stdio or on `--http`'s socket.

This module does not import the `mcp` SDK: it is imported on a worker thread while the
runtime starts (`serve_protocol`'s *prepare*), so the kernel's boot and the SDK's import
overlap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cave_tui.app.protocol_server import Run, serve_protocol

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices
    from cave_tui.app.startup import DataOptions
    from cave_tui.frontends.mcp.http import Transport
    from cave_tui.frontends.mcp.http_socket import HttpListener


def server_of(services: AppServices, listener: HttpListener | None) -> Run:
    """Import the SDK and the server; the `Run` that builds the server of *services* and
    serves it on stdio, or over HTTP on *listener* (`http.http_transport`)."""
    from cave_tui.frontends.mcp.server import build_server, run_stdio

    transport: Transport = run_stdio
    if listener is not None:
        from cave_tui.frontends.mcp.http import http_transport

        transport = http_transport(listener)

    async def run() -> None:
        await transport(build_server(services))

    return run


async def serve(
    services: AppServices, data: DataOptions, listener: HttpListener | None = None
) -> int:
    """Serve *services* over stdio (or HTTP on *listener*, bound by the caller before the
    start) until the client leaves or a signal ends it; the exit code."""
    return await serve_protocol(
        services,
        data,
        name="cave mcp",
        prepare=lambda: server_of(services, listener),
        agent_later=True,  # only `ask` needs the agent: `run` and the others answer first
    )
