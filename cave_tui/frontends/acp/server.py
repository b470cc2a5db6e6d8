"""`cave acp`: the ACP agent served over stdio, in the lifecycle every protocol front end
shares (`app.protocol_server`: data features, runtime, exit hooks); stdout is the protocol's.

This module does not import the `acp` SDK: `agent_of` imports it on a worker thread while
the runtime starts (`serve_protocol`'s *prepare*), so the kernel's boot and the SDK's
import overlap.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from cave_tui.app.protocol_server import Run, serve_protocol

if TYPE_CHECKING:
    from cave_tui.app.services import AppServices
    from cave_tui.app.startup import DataOptions


def agent_of(services: AppServices, data: DataOptions) -> Run:
    """Import the SDK and the agent; the `Run` that serves cave's agent on *services* over
    this process's stdin and stdout until the client closes stdin."""
    from typing import cast

    from acp import Agent, run_agent
    from acp.stdio import stdio_streams

    from cave_tui.frontends.acp.agent import CaveAcpAgent
    from cave_tui.frontends.acp.transport import LINE_LIMIT, LineTransport

    async def run() -> None:
        agent = CaveAcpAgent(services, trust=data.trust)
        reader, writer = await stdio_streams(limit=LINE_LIMIT)
        # The SDK routes by method name and answers -32601 for what cave does not implement
        # (session/list, set_mode, …), so the agent implements part of its `Agent` protocol.
        await run_agent(cast("Agent", agent), LineTransport(reader, writer))

    return run


async def serve(services: AppServices, data: DataOptions) -> int:
    """Serve *services* as an ACP agent over stdio until the client leaves; the exit code
    (`app.protocol_server`: the lifecycle `cave mcp` shares)."""
    return await serve_protocol(
        services, data, name="cave acp", prepare=lambda: agent_of(services, data)
    )
