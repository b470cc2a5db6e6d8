"""Whether a model server on this machine is there at all, asked before any client is built.

A loopback connection is accepted or refused at once, so `unreachable` answers within
`CONNECT_TIMEOUT` (a server that accepts nothing in that time is stuck); it runs before
litellm is imported (seconds), so a server that is not running is named at once.
"""

from __future__ import annotations

import socket
from urllib.parse import urlsplit

from cave_tui.models.base import ErrorKind, ModelError
from cave_tui.models.endpoints import is_loopback
from cave_tui.models.failures import CallTarget, connection_refused

CONNECT_TIMEOUT = 2.0  # seconds for a loopback server to accept a connection
DEFAULT_PORTS = {"http": 80, "https": 443}


def unreachable(target: CallTarget, timeout: float = CONNECT_TIMEOUT) -> ModelError | None:
    """A CONNECTION `ModelError` naming *target*'s URL when its endpoint is on loopback and
    accepts no TCP connection within *timeout* seconds; None otherwise (a remote or default
    endpoint is not asked here: its client reports it)."""
    url = target.endpoint
    if not url or not is_loopback(url):
        return None
    try:
        parts = urlsplit(url if "://" in url else f"http://{url}")
        port = parts.port or DEFAULT_PORTS.get(parts.scheme.lower())
    except ValueError:
        return None
    if parts.hostname is None or port is None:
        return None
    try:
        with socket.create_connection((parts.hostname, port), timeout=timeout):
            return None
    except ConnectionRefusedError:
        return connection_refused(target)
    except TimeoutError:
        return ModelError(
            f"{target.where}{target.for_model} accepted no connection within {timeout:g} s: "
            "is the server stuck, or still starting?",
            kind=ErrorKind.CONNECTION,
        )
    except OSError as exc:
        return ModelError(
            f"cannot connect to {target.where}{target.for_model}: {exc.strerror or exc}",
            kind=ErrorKind.CONNECTION,
        )
