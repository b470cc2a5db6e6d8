"""`cave mcp --http HOST:PORT`: the server over the SDK's streamable HTTP transport.

The SDK's `StreamableHTTPSessionManager` answers the protocol at `/mcp`, served by uvicorn
on a socket bound before the runtime starts (a port in use stops the start at once). Every
request passes `BearerGate` first: a `Host` that is not this server's address (421) or an
`Origin` that is not loopback (403) is refused by the SDK's DNS-rebinding checks, then a
request without `Authorization: Bearer <token>` gets 401. The token is random per start
(`secrets.token_urlsafe`) unless `CAVE_MCP_TOKEN` fixes it. A host other than loopback is
bound only when asked for by name, with a warning.
"""

from __future__ import annotations

import asyncio
import contextlib
import hmac
import ipaddress
import secrets
import socket
import sys
from collections.abc import Awaitable, Callable, Iterator, Mapping
from dataclasses import dataclass

import uvicorn
from mcp.server.mcpserver import MCPServer
from mcp.server.streamable_http_manager import StreamableHTTPSessionManager
from mcp.server.transport_security import TransportSecurityMiddleware, TransportSecuritySettings
from starlette.requests import Request
from starlette.responses import Response
from starlette.types import ASGIApp, Receive, Scope, Send

from cave_tui.frontends.mcp.server import initialization_options
from cave_tui.printable import printable

MCP_PATH = "/mcp"
TOKEN_ENV = "CAVE_MCP_TOKEN"
MIN_TOKEN_CHARS = 16  # a fixed token shorter than this is refused (guessable)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")
STOP_BUDGET = 3  # seconds open HTTP connections get to close when the server ends

Transport = Callable[[MCPServer], Awaitable[None]]


class HttpSetupError(Exception):
    """`--http` cannot be served as given (a bad address, a port in use, a bad token)."""


@dataclass(frozen=True)
class HttpAddress:
    """Where `--http` listens: *host* as given (default loopback) and *port* (0: any free)."""

    host: str
    port: int


def parse_address(spec: str) -> HttpAddress:
    """`PORT`, `:PORT`, `HOST:PORT` or `[IPV6]:PORT`; no host means 127.0.0.1."""
    text = spec.strip()
    host, sep, port_text = text.rpartition(":")
    if not sep:
        host, port_text = "", text
    if host.startswith("[") and host.endswith("]"):
        host = host[1:-1]
    elif ":" in host:
        raise HttpSetupError(f"--http {spec!r}: write an IPv6 host in brackets, e.g. [::1]:8000")
    try:
        port = int(port_text)
    except ValueError:
        raise HttpSetupError(f"--http {spec!r}: expected PORT or HOST:PORT") from None
    if not 0 <= port <= 65535:
        raise HttpSetupError(f"--http {spec!r}: the port must be 0-65535 (0: any free port)")
    return HttpAddress(host or "127.0.0.1", port)


def token_from(environ: Mapping[str, str]) -> str:
    """`CAVE_MCP_TOKEN` when set (at least MIN_TOKEN_CHARS printable ASCII characters, no
    spaces), else a new random token."""
    fixed = environ.get(TOKEN_ENV)
    if fixed is None:
        return secrets.token_urlsafe(32)
    if len(fixed) < MIN_TOKEN_CHARS or not all("!" <= c <= "~" for c in fixed):
        raise HttpSetupError(
            f"{TOKEN_ENV} must be at least {MIN_TOKEN_CHARS} printable ASCII characters "
            "without spaces (unset it for a random token)"
        )
    return fixed


@dataclass
class HttpListener:
    """A bound socket and what the server is reached as (its names, its token)."""

    sock: socket.socket
    host: str  # as given (a name or an address)
    ip: ipaddress.IPv4Address | ipaddress.IPv6Address
    port: int
    token: str

    @property
    def loopback(self) -> bool:
        return self.ip.is_loopback

    @property
    def wildcard(self) -> bool:
        """Bound to every interface (0.0.0.0, ::): no single name to check `Host` against."""
        return self.ip.is_unspecified

    @property
    def url(self) -> str:
        return f"http://{_url_host(self.host)}:{self.port}{MCP_PATH}"

    def host_names(self) -> list[str]:
        """The `Host` values this server answers to (`name:port`)."""
        names = {_url_host(self.host), _url_host(str(self.ip))}
        if self.loopback:
            names.add("localhost")
        return sorted(f"{name}:{self.port}" for name in names)

    def security(self) -> TransportSecuritySettings:
        """The SDK's DNS-rebinding checks: `Host` one of `host_names` (not checked on a
        wildcard bind), an `Origin` (when sent) on a loopback host or on this server's."""
        hosts = [*LOOPBACK_NAMES, *(n.rpartition(":")[0] for n in self.host_names())]
        origins = [
            f"{scheme}://{host}{port}"
            for scheme in ("http", "https")
            for host in dict.fromkeys(hosts)
            for port in ("", ":*")
        ]
        return TransportSecuritySettings(
            enable_dns_rebinding_protection=not self.wildcard,
            allowed_hosts=self.host_names(),
            allowed_origins=origins,
        )

    def close(self) -> None:
        self.sock.close()


def _url_host(host: str) -> str:
    return f"[{host}]" if ":" in host else host


def listen(address: HttpAddress, token: str) -> HttpListener:
    """A socket bound to *address* and listening; `HttpSetupError` saying why not."""
    try:
        infos = socket.getaddrinfo(
            address.host, address.port, type=socket.SOCK_STREAM, flags=socket.AI_PASSIVE
        )
    except OSError as exc:
        raise HttpSetupError(f"--http: cannot resolve {address.host!r}: {exc}") from None
    family, kind, proto, _, where = infos[0]
    sock = socket.socket(family, kind, proto)
    try:
        sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        sock.bind(where)
        sock.listen(128)
    except OSError as exc:
        sock.close()
        raise HttpSetupError(
            f"--http: cannot listen on {_url_host(address.host)}:{address.port}: {exc.strerror}"
        ) from None
    sock.setblocking(False)
    bound = sock.getsockname()
    return HttpListener(sock, address.host, ipaddress.ip_address(bound[0]), bound[1], token)


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
