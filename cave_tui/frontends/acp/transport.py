"""`cave acp`'s stdio transport: JSON-RPC lines, a malformed one answered, never dropped.

The SDK's own line transport logs a line that is not JSON and reads on, so the client that
sent it waits forever, and a JSON value that is not an object stops its receive loop. Here
such a line gets the JSON-RPC 2.0 error with `id: null` (-32700: not JSON; -32600: JSON but
not a message) and the next line is read. The SDK's `Connection` runs over it (its message
`Transport` seam).
"""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass
from typing import Any

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
LINE_LIMIT = 50 * 1024 * 1024  # the SDK's own stdio limit (images in prompts)

Message = dict[str, Any]


def protocol_error(code: int, message: str, request_id: object = None) -> Message:
    """The JSON-RPC error answering a line that is no message."""
    return {"jsonrpc": "2.0", "id": request_id, "error": {"code": code, "message": message}}


@dataclass(frozen=True)
class Unreadable:
    """A line that holds no JSON-RPC message: the error that answers it."""

    answer: Message


def read_message(line: bytes) -> Message | Unreadable:
    """The message *line* holds, or the `Unreadable` error answering it."""
    try:
        value = json.loads(line)
    except (ValueError, UnicodeDecodeError):
        return Unreadable(protocol_error(PARSE_ERROR, "Parse error: the line is not JSON"))
    if not isinstance(value, dict) or value.get("jsonrpc") != "2.0":
        return Unreadable(
            protocol_error(INVALID_REQUEST, "Invalid Request: not a JSON-RPC 2.0 message")
        )
    request_id = value.get("id")
    if request_id is not None and (
        isinstance(request_id, bool) or not isinstance(request_id, str | int)
    ):
        return Unreadable(
            protocol_error(INVALID_REQUEST, "Invalid Request: the id is not a string or number")
        )
    method = value.get("method")
    if method is None and "id" not in value:
        return Unreadable(
            protocol_error(INVALID_REQUEST, "Invalid Request: neither a call nor a response")
        )
    if method is not None and not isinstance(method, str):
        return Unreadable(
            protocol_error(
                INVALID_REQUEST, "Invalid Request: the method is not a string", request_id
            )
        )
    return value


class LineTransport:
    """Newline-delimited JSON-RPC over asyncio streams (the SDK's `Transport` protocol)."""

    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._reader = reader
        self._writer = writer
        self._lock = asyncio.Lock()

    async def send(self, message: Message) -> None:
        data = (json.dumps(message, separators=(",", ":")) + "\n").encode()
        async with self._lock:
            self._writer.write(data)
            await self._writer.drain()

    async def receive(self) -> Message | None:
        """The next message; None at the end of input. Malformed lines are answered here."""
        while True:
            try:
                line = await self._reader.readline()
            except ValueError:  # longer than LINE_LIMIT: asyncio dropped it
                await self.send(protocol_error(INVALID_REQUEST, "Invalid Request: line too long"))
                continue
            if not line:
                return None
            if not line.strip():
                continue
            message = read_message(line)
            if isinstance(message, Unreadable):
                await self.send(message.answer)
                continue
            return message

    async def close(self) -> None:
        self._writer.close()
