"""`cave mcp --http HOST:PORT`'s socket: the address and token read, the socket bound.

Light on purpose (no `mcp` SDK, no uvicorn): the command line binds the socket before the
runtime starts (a port in use stops the start at once), while the SDK is imported during
the runtime's start (`serving.serve`). The server on it is `http.http_transport`.
"""

from __future__ import annotations

import ipaddress
import secrets
import socket
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from mcp.server.transport_security import TransportSecuritySettings

MCP_PATH = "/mcp"
TOKEN_ENV = "CAVE_MCP_TOKEN"
MIN_TOKEN_CHARS = 16  # a fixed token shorter than this is refused (guessable)
LOOPBACK_NAMES = ("127.0.0.1", "localhost", "[::1]")


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
        from mcp.server.transport_security import TransportSecuritySettings

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
