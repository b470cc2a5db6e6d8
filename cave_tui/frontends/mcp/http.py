"""`cave mcp --http HOST:PORT`: the server over the SDK's streamable HTTP transport.

The SDK's `StreamableHTTPSessionManager` answers the protocol at `/mcp`, served by uvicorn
on a socket bound before the runtime starts (`http_socket`: a port in use stops the start
at once). Every request passes `BearerGate` first: a `Host` that is not this server's
address (421) or an `Origin` that is not loopback (403) is refused by the SDK's
DNS-rebinding checks, then a request without `Authorization: Bearer <token>` gets 401. The
token is random per start (`secrets.token_urlsafe`) unless `CAVE_MCP_TOKEN` fixes it. A
host other than loopback is bound only when asked for by name, with a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from cave_tui.frontends.mcp.http_socket import MCP_PATH, HttpListener, HttpSetupError
from cave_tui.frontends.mcp.server import initialization_options
from cave_tui.printable import printable

STOP_BUDGET = 3  # seconds open HTTP connections get to close when the server ends

Transport = Callable[[MCPServer], Awaitable[None]]


class BearerGate:
    """ASGI: the DNS-rebinding checks (421/403), then the bearer token (401, compared in
    constant time), then `MCP_PATH` only (404); what passes goes to *app*."""

    def __init__(self, app: ASGIApp, token: str, security: TransportSecuritySettings) -> None:
        self.app = app
        self._expected = f"Bearer {token}".encode()
        self._security = TransportSecurityMiddleware(security)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":  # no lifespan (uvicorn's is off), no websockets
            return
        request = Request(scope, receive)
        refused = await self._security.validate_request(request, is_post=False)
        if refused is None and not self._authorized(request.headers.get("authorization")):
            refused = Response(
                "Unauthorized: send Authorization: Bearer <the token cave mcp printed>",
                status_code=401,
                headers={"WWW-Authenticate": 'Bearer realm="cave mcp"'},
            )
        if refused is None and scope["path"].rstrip("/") != MCP_PATH:
            refused = Response(f"Not found: the MCP endpoint is {MCP_PATH}", status_code=404)
        if refused is not None:
            await refused(scope, receive, send)
            return
        await self.app(scope, receive, send)

    def _authorized(self, header: str | None) -> bool:
        if header is None:
            return False
        scheme, _, value = header.strip().partition(" ")
        given = f"Bearer {value.strip()}".encode("utf-8", "replace")
        return scheme.lower() == "bearer" and hmac.compare_digest(given, self._expected)


class _Uvicorn(uvicorn.Server):
    """uvicorn's server that leaves the signals to cave (`CancelOnSignals`, asyncio's
    Ctrl+C) and says when it accepts connections."""

    def __init__(self, config: uvicorn.Config) -> None:
        super().__init__(config)
        self.listening = asyncio.Event()

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        yield

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets)
        self.listening.set()


def _say(text: str) -> None:
    """A line on stderr, printable only."""
    sys.stderr.write(printable(text) + "\n")
    sys.stderr.flush()


def announce(listener: HttpListener) -> None:
    """Where the server is, its token and the line that registers it in Claude Code."""
    if not listener.loopback:
        _say(
            f"cave mcp: WARNING: listening on {listener.host}, not loopback: anyone who can "
            "reach this port and has the token can run code in the namespace"
        )
    if listener.wildcard:
        _say("cave mcp: WARNING: on every interface the Host and Origin headers are not checked")
    _say(f"cave mcp: {listener.url} token: {listener.token}")
    _say(
        f"cave mcp: claude mcp add --transport http cave {listener.url} "
        f'--header "Authorization: Bearer {listener.token}"'
    )


def http_transport(listener: HttpListener) -> Transport:
    """The transport `serve` runs *server* on: the session manager and uvicorn on
    *listener*'s socket until cancelled (then the sessions end and the connections close)."""

    async def run(server: MCPServer) -> None:
        lowlevel = server._lowlevel_server
        options = initialization_options(server)  # resources.listChanged declared, as on stdio
        # The session manager asks the lowlevel server for its options, with defaults.
        lowlevel.create_initialization_options = lambda *_a, **_k: options  # type: ignore[method-assign]
        manager = StreamableHTTPSessionManager(
            app=server._lowlevel_server,  # what the SDK's own `streamable_http_app` serves
            security_settings=listener.security(),
        )
        gate = BearerGate(manager.handle_request, listener.token, listener.security())
        config = uvicorn.Config(
            gate,
            lifespan="off",
            log_level="warning",
            access_log=False,
            timeout_graceful_shutdown=STOP_BUDGET,
        )
        web = _Uvicorn(config)
        serving = asyncio.ensure_future(web.serve(sockets=[listener.sock]))
        try:
            async with manager.run():
                listening = asyncio.ensure_future(web.listening.wait())
                await asyncio.wait({serving, listening}, return_when=asyncio.FIRST_COMPLETED)
                listening.cancel()
                if serving.done():  # uvicorn stopped before it listened
                    serving.result()
                    raise HttpSetupError("--http: the HTTP server stopped at its start")
                announce(listener)
                await asyncio.shield(serving)
        finally:
            web.should_exit = True
            with contextlib.suppress(Exception, asyncio.CancelledError):
                await asyncio.wait_for(asyncio.shield(serving), STOP_BUDGET + 2)
            listener.close()

    return run
