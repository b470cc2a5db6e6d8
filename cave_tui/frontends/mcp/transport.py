"""`cave mcp`'s stdio transport: the SDK's, answering a malformed line with a JSON-RPC error.

The SDK's stdio server drops a line that is not a JSON-RPC message (logged at debug), so a
client that sent it waits for an answer that never comes. JSON-RPC 2.0 answers it with
`id: null`: -32700 when the line is not JSON, -32600 when it is JSON but no valid message.
The server goes on reading the next line either way.

When stdin and stdout are pipes or sockets (as a client spawns a server), lines are read
and written on the event loop (asyncio pipe transports) instead of the SDK's worker thread
per read, write and flush: three thread hops a call, most of `cave mcp`'s per-call cost on
a busy machine. A stdin that is no pipe (a terminal, a file) is read by a daemon thread of
its own, never the SDK's worker: a read blocked there held up Ctrl+C (the main task's
cancel waited for the next line). A stdout that is no pipe keeps the SDK's writer. fd 0
and fd 1 are claimed as the SDK claims them (a cell's stray output misses the wire).
"""

from __future__ import annotations

import asyncio
import os
import stat
import sys
import threading
from collections.abc import AsyncIterator, Callable
from contextlib import AsyncExitStack, asynccontextmanager
from typing import BinaryIO

import anyio
from anyio.streams.memory import MemoryObjectReceiveStream, MemoryObjectSendStream
from mcp.server.stdio import _claim_fd, _open_stdin_diversion, _open_stdout_diversion, stdio_server
from mcp.shared.message import SessionMessage
from mcp_types import INVALID_REQUEST, PARSE_ERROR, ErrorData, JSONRPCError
from pydantic import ValidationError

Inbound = SessionMessage | Exception
Streams = tuple[MemoryObjectReceiveStream[Inbound], MemoryObjectSendStream[SessionMessage]]
LINE_LIMIT = 50 * 1024 * 1024  # a longer line is answered as not JSON, and skipped


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


class PipeLines:
    """The lines of a pipe, read on the event loop (what the SDK's stdio reader iterates)."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    def __aiter__(self) -> PipeLines:
        return self

    async def __anext__(self) -> str:
        try:
            line = await self.reader.readuntil(b"\n")
        except asyncio.IncompleteReadError as exc:  # the last line, without its newline
            line = exc.partial
        except asyncio.LimitOverrunError:
            await self._skip_line()
            return "\0"  # not JSON: answered with a parse error
        if not line:
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")

    async def _skip_line(self) -> None:
        while True:
            try:
                await self.reader.readuntil(b"\n")
                return
            except asyncio.LimitOverrunError as exc:
                await self.reader.readexactly(exc.consumed)
            except asyncio.IncompleteReadError:
                return


class PipeWriter:
    """Text written to a pipe by the event loop (`flush` waits while the pipe is full)."""

    def __init__(self, writer: asyncio.StreamWriter) -> None:
        self.writer = writer

    async def write(self, text: str) -> None:
        self.writer.write(text.encode("utf-8"))

    async def flush(self) -> None:
        await self.writer.drain()


def _is_pipe(fd: int) -> bool:
    try:
        mode = os.fstat(fd).st_mode
    except OSError:
        return False
    return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)


def _loop_stdout_fits() -> bool:
    """stdout is a pipe (or socket) and not stderr's file (made non-blocking, it would make
    stderr's writes fail when full)."""
    if not _is_pipe(1):
        return False
    try:
        out, err = os.fstat(1), os.fstat(2)
    except OSError:
        return True
    return (out.st_dev, out.st_ino) != (err.st_dev, err.st_ino)


class ThreadLines:
    """The lines of a stdin that is no pipe (a terminal, a file), read by a daemon thread:
    a cancelled read never waits for the next line (Ctrl+C while the client says nothing),
    and the thread, blocked in its read, never holds up the exit."""

    def __init__(self, stream: BinaryIO) -> None:
        self._lines: asyncio.Queue[bytes] = asyncio.Queue()
        loop = asyncio.get_running_loop()

        def put(line: bytes) -> bool:
            try:
                loop.call_soon_threadsafe(self._lines.put_nowait, line)
                return True
            except RuntimeError:  # the loop is closed: nobody reads any more
                return False

        def read() -> None:
            try:
                while (line := _bounded_line(stream)) and put(line):
                    pass
            except (OSError, ValueError):  # closed at exit
                pass
            put(b"")  # the end, once: the thread ends here

        threading.Thread(target=read, name="cave-mcp-stdin", daemon=True).start()

    def __aiter__(self) -> ThreadLines:
        return self

    async def __anext__(self) -> str:
        line = await self._lines.get()
        if not line:
            self._lines.put_nowait(b"")  # the end stays the end
            raise StopAsyncIteration
        return line.decode("utf-8", errors="replace")


def _bounded_line(stream: BinaryIO) -> bytes:
    """The next line of *stream* (b"" at its end); a line over LINE_LIMIT is skipped to its
    newline and read as "\0" (not JSON: answered with a parse error)."""
    line = stream.readline(LINE_LIMIT + 1)
    if len(line) <= LINE_LIMIT or line.endswith(b"\n"):
        return line
    while (rest := stream.readline(LINE_LIMIT)) and not rest.endswith(b"\n"):
        pass
    return b"\0\n"


@asynccontextmanager
async def _stdin_lines() -> AsyncIterator[PipeLines | ThreadLines]:
    """fd 0 claimed (diverted, the wire on a private copy), its lines read by the event loop
    when it is a pipe or socket, else by a daemon thread; restored on exit."""
    async with AsyncExitStack() as stack:
        stdin, release = _claim_fd(0, sys.stdin, "rb", _open_stdin_diversion)
        if not _is_pipe(stdin.fileno()):
            if release is not None:
                stack.callback(release)
            yield ThreadLines(stdin)
            return
        _on_exit(stack, stdin, release)
        reader = asyncio.StreamReader(limit=LINE_LIMIT)
        read_pipe, _ = await asyncio.get_running_loop().connect_read_pipe(
            lambda: asyncio.StreamReaderProtocol(reader), stdin
        )
        stack.callback(read_pipe.close)
        yield PipeLines(reader)


@asynccontextmanager
async def _loop_stdout() -> AsyncIterator[PipeWriter]:
    """fd 1 claimed (stray output goes to stderr), written by the event loop; restored on exit."""
    loop = asyncio.get_running_loop()
    async with AsyncExitStack() as stack:
        stdout, release = _claim_fd(1, sys.stdout, "wb", _open_stdout_diversion)
        _on_exit(stack, stdout, release)
        write_pipe, flow = await loop.connect_write_pipe(asyncio.streams.FlowControlMixin, stdout)
        stack.callback(write_pipe.close)
        yield PipeWriter(asyncio.StreamWriter(write_pipe, flow, None, loop))


def _on_exit(stack: AsyncExitStack, pipe: BinaryIO, release: Callable[[], None] | None) -> None:
    """At exit: the wire's copy blocking again, then the standard fd pointed back at it."""
    if release is not None:
        stack.callback(release)
    stack.callback(os.set_blocking, pipe.fileno(), True)


@asynccontextmanager
async def _sdk_stdio() -> AsyncIterator[Streams]:
    """The SDK's stdio server, reading stdin on the event loop (or a daemon thread), and
    writing stdout on the event loop where it is a pipe (else the SDK's own writer)."""
    async with AsyncExitStack() as stack:
        lines = await stack.enter_async_context(_stdin_lines())
        out = await stack.enter_async_context(_loop_stdout()) if _loop_stdout_fits() else None
        async with stdio_server(lines, out) as streams:  # type: ignore[arg-type]
            yield streams


@asynccontextmanager
async def stdio_streams() -> AsyncIterator[Streams]:
    """The SDK's stdio streams, with every unreadable line answered on stdout, never passed on."""
    async with _sdk_stdio() as (read, write):
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
