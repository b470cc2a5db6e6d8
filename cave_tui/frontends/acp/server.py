"""`cave acp`: the ACP agent served over stdio, in the lifecycle every protocol front end
shares (`app.protocol_server`: data features, runtime, exit hooks); stdout is the protocol's.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, cast

from acp import run_agent
from acp.stdio import stdio_streams

from cave_tui.app.protocol_server import serve_protocol
from cave_tui.frontends.acp.agent import CaveAcpAgent
from cave_tui.frontends.acp.transport import LINE_LIMIT, LineTransport

if TYPE_CHECKING:
    from acp import Agent

    from cave_tui.app.services import AppServices
    from cave_tui.app.startup import DataOptions


async def _run_stdio(agent: CaveAcpAgent) -> None:
    """Serve *agent* over this process's stdin and stdout until the client closes stdin."""
    reader, writer = await stdio_streams(limit=LINE_LIMIT)
    # The SDK routes by method name and answers -32601 for what cave does not implement
    # (session/list, set_mode, …), so the agent implements part of its `Agent` protocol.
    await run_agent(cast("Agent", agent), LineTransport(reader, writer))


async def serve(services: AppServices, data: DataOptions) -> int:
    """Serve *services* as an ACP agent over stdio until the client leaves; the exit code
    (`app.protocol_server`: the lifecycle `cave mcp` shares)."""

    async def run() -> None:
        await _run_stdio(CaveAcpAgent(services, trust=data.trust))

    return await serve_protocol(services, data, name="cave acp", run=run)
