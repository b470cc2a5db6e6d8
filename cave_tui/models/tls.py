"""TLS contexts for httpx clients to model servers, made once per process.

httpx builds a TLS context with certifi's CA file for every client it makes (50-120 ms),
even for a plain http URL; the model client makes one per call. Here the verified context
is made at most once, and only for an https URL; a plain http URL gets a bare context that
is never used (were it used, it would trust no certificate: it fails closed).
"""

from __future__ import annotations

import functools
import ssl
from urllib.parse import urlsplit


@functools.cache
def _verified(trust_env: bool) -> ssl.SSLContext:
    import httpx

    return httpx.create_ssl_context(trust_env=trust_env)


@functools.cache
def _bare() -> ssl.SSLContext:
    return ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)


def tls_context(url: str, *, trust_env: bool = True) -> ssl.SSLContext:
    """The context for an httpx client that will call *url* (httpx's `verify=`): httpx's own
    verified one for https (`SSL_CERT_FILE`/`SSL_CERT_DIR` read when *trust_env*), cached."""
    scheme = urlsplit(url if "://" in url else f"http://{url}").scheme.lower()
    return _verified(trust_env) if scheme == "https" else _bare()
