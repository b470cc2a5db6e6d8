"""Where a model call goes, and whether an API key may go with it.

A server on this machine's loopback may be anyone's: in the unsandboxed kernel mode the
kernel itself can listen there and pose as Ollama or an OpenAI-compatible server. So a key
goes to a loopback server only when the user named that exact URL (`--api-base`, config
`api_base`, `/model NAME URL`), never to one reached by a provider's default or an
environment variable (`OPENAI_BASE_URL`, `OLLAMA_API_BASE`), which is what a server found by
discovery is until the user names it. `withhold_keys` enforces it on every request.
"""

from __future__ import annotations

import ipaddress
import os
from collections.abc import Mapping
from typing import Any
from urllib.parse import urlsplit

from cave_tui.models.listeners import kernel_ports

# Providers whose endpoint litellm defaults to a server on this machine.
LOCAL_DEFAULTS = {
    "ollama": "http://localhost:11434",
    "ollama_chat": "http://localhost:11434",
    "llamafile": "http://127.0.0.1:8080/v1",
}
ENV_PREFIX = {"ollama_chat": "OLLAMA"}  # providers that read another provider's variables
LOOPBACK_NAMES = frozenset({"localhost", "localhost.localdomain", "ip6-localhost", "ip6-loopback"})
# litellm arguments that carry a credential (`Credentials.litellm_kwargs` and `api_key=`).
KEY_ARGUMENTS = ("api_key", "aws_access_key_id", "aws_secret_access_key", "aws_session_token")
# Headers a provider client carries a key in: sent empty, over whatever the client put there.
KEY_HEADERS = ("Authorization", "api-key", "x-api-key")
PLACEHOLDER_KEY = "cave-withheld"  # what the client holds instead (never sent: headers blank it)
WITHHELD_HINT = (
    "cave sends API keys to a server on this machine only at a URL you named: pass "
    "--api-base URL (or /model NAME URL) to send it"
)


def is_loopback(url: str | None) -> bool:
    """True when *url*'s host is this machine (a loopback or unspecified address, localhost)."""
    if not url:
        return False
    try:
        host = urlsplit(url if "://" in url else f"http://{url}").hostname or ""
    except ValueError:
        return False
    host = host.rstrip(".").lower()
    if host in LOOPBACK_NAMES or host.endswith(".localhost"):
        return True
    try:
        address = ipaddress.ip_address(host)
    except ValueError:
        return False
    mapped = getattr(address, "ipv4_mapped", None)
    address = mapped if mapped is not None else address
    return address.is_loopback or address.is_unspecified


def same_url(a: str | None, b: str | None) -> bool:
    """*a* and *b* name the same endpoint (case of scheme and host, a trailing / aside)."""
    if not a or not b:
        return False

    def norm(url: str) -> tuple[str, str, str]:
        parts = urlsplit(url.strip())
        return parts.scheme.lower(), parts.netloc.lower(), parts.path.rstrip("/")

    return norm(a) == norm(b)


def resolved_endpoint(
    provider: str | None,
    api_base: str | None,
    default_base: str | None,
    env: Mapping[str, str] | None = None,
) -> str | None:
    """The base URL a call goes to: *api_base*, else the provider's environment variable
    (`<PROVIDER>_BASE_URL`, `<PROVIDER>_API_BASE`), else its default (litellm's *default_base*
    or a local server's port); None: the provider's hosted API."""
    if api_base:
        return api_base
    env = os.environ if env is None else env
    if provider:
        prefix = ENV_PREFIX.get(provider, provider.upper())
        for name in (f"{prefix}_BASE_URL", f"{prefix}_API_BASE"):
            if env.get(name):
                return env[name]
    return default_base or LOCAL_DEFAULTS.get(provider or "")


def kernel_owned(url: str | None) -> bool:
    """True when *url* is on loopback and a cave kernel listens on its port (listeners.py):
    a kernel posing as a model server, which gets neither a key nor the conversation."""
    if not is_loopback(url):
        return False
    try:
        parts = urlsplit(url or "")
        port = parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return False
    return port is not None and port in kernel_ports([port])


def key_may_go(endpoint: str | None, named: str | None) -> bool:
    """True unless *endpoint* is on loopback and is not the URL the user *named*."""
    return not is_loopback(endpoint) or same_url(endpoint, named)


def withhold_keys(kwargs: dict[str, Any]) -> None:
    """Strip every credential from the litellm arguments *kwargs* (in place): the client gets
    a placeholder key and sends the key headers empty, so no key (nor the environment's,
    which litellm would read in a key's absence) reaches the server."""
    for name in KEY_ARGUMENTS:
        kwargs.pop(name, None)
    kwargs["api_key"] = PLACEHOLDER_KEY
    headers: dict[str, Any] = dict(kwargs.get("extra_headers") or {})
    for header in KEY_HEADERS:
        for present in [h for h in headers if h.lower() == header.lower()]:
            del headers[present]
        headers[header] = ""
    kwargs["extra_headers"] = headers
