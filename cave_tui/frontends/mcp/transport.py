"""`cave mcp`'s stdio transport: the SDK's, answering a malformed line with a JSON-RPC error.

The SDK's stdio server drops a line that is not a JSON-RPC message (logged at debug), so a
client that sent it waits for an answer that never comes. JSON-RPC 2.0 answers it with
`id: null`: -32700 when the line is not JSON, -32600 when it is JSON but no valid message.
The server goes on reading the next line either way.
"""

from __future__ import annotations

from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

Inbound = SessionMessage | Exception
Streams = tuple[MemoryObjectReceiveStream[Inbound], MemoryObjectSendStream[SessionMessage]]


def protocol_error(exc: Exception) -> SessionMessage:
    """The JSON-RPC error answering a line the transport could not read (*exc* says why)."""
    not_json = isinstance(exc, ValidationError) and any(
        e["type"] == "json_invalid" for e in exc.errors()
    )
    if not_json:
        error = ErrorData(code=PARSE_ERROR, message="Parse error: the line is not JSON")
    else:
        error = ErrorData(code=INVALID_REQUEST, message="Invalid Request: not a JSON-RPC message")
    return SessionMessage(JSONRPCError(jsonrpc="2.0", id=None, error=error))


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[Streams]:
    """The SDK's stdio streams, with every unreadable line answered on stdout, never passed on."""
    async with stdio_server() as (read, write):
        passed, received = anyio.create_memory_object_stream[Inbound](0)

        async def pump() -> None:
            async with passed:
                async for item in read:
                    if isinstance(item, Exception):
                        await write.send(protocol_error(item))
                    else:
                        await passed.send(item)

        async with anyio.create_task_group() as group:
            group.start_soon(pump)
            try:
                yield received, write
            finally:
                group.cancel_scope.cancel()
