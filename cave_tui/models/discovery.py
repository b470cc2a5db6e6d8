"""Local model servers found, not configured: Ollama and OpenAI-compatible servers on loopback.

`discover()` probes, all at once and with short time limits, Ollama's API (`OLLAMA_HOST`,
else 127.0.0.1:11434) and `/v1/models` on the loopback ports local servers use by default
(llama.cpp, vLLM, LM Studio, ...), plus any base URLs in `CAVE_SERVERS`. It returns only
the servers that answered, each model with the exact `--model`/`--api-base` to use. A
closed loopback port refuses at once, so a probe of nothing costs milliseconds.

A server a cave kernel listens on (`listeners.kernel_ports`: the kernel posing as a model
server) is listed as kernel-owned, with no models: it is never offered as one.
"""

from __future__ import annotations

import asyncio
import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import StrEnum
from typing import Any
from urllib.parse import urlsplit

import httpx

from cave_tui.models.endpoints import is_loopback
from cave_tui.models.listeners import kernel_ports
from cave_tui.models.tls import tls_context
from cave_tui.printable import printable_line

OLLAMA_DEFAULT = "http://127.0.0.1:11434"
# Port -> the server that uses it by default (the label is a guess until the server says).
OPENAI_PORTS: dict[int, str] = {
    8080: "llama.cpp",
    8000: "vLLM",
    1234: "LM Studio",
    5000: "text-generation-webui",
    1337: "Jan",
    8411: "llama.cpp",  # cave's own ../shared/local-llm serve.py
}
# What `/v1/models` says in `owned_by`, for a truer label than the port.
OWNERS = {"llamacpp": "llama.cpp", "vllm": "vLLM", "organization_owner": "LM Studio"}
PROBE_TIMEOUT = 0.4  # seconds per request; all probes run at once


class ServerKind(StrEnum):
    """How cave talks to a found server."""

    OLLAMA = "ollama"
    OPENAI = "openai-compatible"
    EMBEDDED = "embedded"  # cave's own llama.cpp server, started when it is used


@dataclass(frozen=True)
class FoundModel:
    """One model a server offers, with the exact options that select it."""

    name: str
    model: str  # the --model string
    api_base: str | None = None  # the --api-base, when litellm's default is not it
    context_window: int | None = None  # as the server reports it (n_ctx, max_model_len)

    @property
    def flags(self) -> str:
        """`--model X [--api-base URL]`, ready to paste."""
        base = f" --api-base {self.api_base}" if self.api_base else ""
        return f"--model {self.model}{base}"


@dataclass(frozen=True)
class FoundServer:
    """A server that answered a probe, and its models (empty: it runs but serves none)."""

    kind: ServerKind
    label: str
    base_url: str
    models: tuple[FoundModel, ...]
    kernel_owned: bool = False  # a cave kernel listens there: never offered as a model


def ollama_url(env: Mapping[str, str] | None = None) -> str:
    """Ollama's base URL from `OLLAMA_HOST` (host, host:port or URL), else the default."""
    host = (env if env is not None else os.environ).get("OLLAMA_HOST", "").strip()
    if not host:
        return OLLAMA_DEFAULT
    parsed = urlsplit(host if "://" in host else f"http://{host}")
    try:
        port = parsed.port or 11434
    except ValueError:  # not a host[:port] we can read (a bare IPv6 address)
        return OLLAMA_DEFAULT
    name = parsed.hostname or "127.0.0.1"
    if name in ("0.0.0.0", "::"):  # a listening address: reach it on loopback
        name = "127.0.0.1"
    if ":" in name:
        name = f"[{name}]"
    return f"{parsed.scheme}://{name}:{port}"


def candidate_urls(env: Mapping[str, str] | None = None) -> list[tuple[str, str]]:
    """(label, base URL ending in /v1) for every OpenAI-compatible server worth probing."""
    env = env if env is not None else os.environ
    found = [(label, f"http://127.0.0.1:{port}/v1") for port, label in OPENAI_PORTS.items()]
    for url in env.get("CAVE_SERVERS", "").split(","):
        url = url.strip().rstrip("/")
        if url:
            url = url if url.endswith("/v1") else f"{url}/v1"
            found.append(("server", url))
    return list(dict.fromkeys(found))


async def _json(client: httpx.AsyncClient, url: str) -> Any:
    response = await client.get(url)
    response.raise_for_status()
    return response.json()


def _entries(payload: Any, key: str) -> list[dict[str, Any]] | None:
    """The dicts listed under *key*, or None when *payload* is not such a listing."""
    if not isinstance(payload, dict) or not isinstance(payload.get(key), list):
        return None
    return [e for e in payload[key] if isinstance(e, dict)]


async def _probe_ollama(client: httpx.AsyncClient, base: str) -> FoundServer | None:
    try:
        tags = _entries(await _json(client, f"{base}/api/tags"), "models")
    except (httpx.HTTPError, ValueError):
        return None
    if tags is None:
        return None
    api_base = None if base == OLLAMA_DEFAULT else base
    models = tuple(
        FoundModel(name=m["name"], model=f"ollama_chat/{m['name']}", api_base=api_base)
        for m in tags
        if isinstance(m.get("name"), str)
    )
    return FoundServer(ServerKind.OLLAMA, "Ollama", base, models)


async def _llama_cpp_context(client: httpx.AsyncClient, base: str) -> int | None:
    """llama.cpp's context size (`/props`), which `/v1/models` does not give."""
    try:
        props = await _json(client, base.removesuffix("/v1") + "/props")
        n_ctx = props["default_generation_settings"]["n_ctx"]
    except (httpx.HTTPError, ValueError, LookupError, TypeError):
        return None
    return _positive(n_ctx)


def _positive(value: Any) -> int | None:
    return value if isinstance(value, int) and value > 0 else None


async def _probe_openai(client: httpx.AsyncClient, label: str, base: str) -> FoundServer | None:
    try:
        listing = _entries(await _json(client, f"{base}/models"), "data")
    except (httpx.HTTPError, ValueError):
        return None
    if listing is None:
        return None
    entries = [e for e in listing if isinstance(e.get("id"), str)]
    owners = {OWNERS[e["owned_by"]] for e in entries if e.get("owned_by") in OWNERS}
    label = owners.pop() if len(owners) == 1 else label
    n_ctx = await _llama_cpp_context(client, base) if label == "llama.cpp" else None
    models = tuple(
        FoundModel(
            name=e["id"],
            model=f"openai/{e['id']}",
            api_base=base,
            context_window=_positive(e.get("max_model_len")) or n_ctx,
        )
        for e in entries
    )
    return FoundServer(ServerKind.OPENAI, label, base, models)


async def discover(
    *,
    env: Mapping[str, str] | None = None,
    openai_urls: Iterable[tuple[str, str]] | None = None,
    timeout: float = PROBE_TIMEOUT,
    embedded_model: bool = True,
) -> list[FoundServer]:
    """The embedded model when installed, then the local servers that answer right now
    (probed at once; bounded by *timeout* × 2)."""
    urls = list(openai_urls) if openai_urls is not None else candidate_urls(env)
    limits = httpx.Timeout(timeout)
    async with httpx.AsyncClient(timeout=limits, trust_env=False) as client:
        probes = [_probe_ollama(client, ollama_url(env))]
        probes += [_probe_openai(client, label, url) for label, url in urls]
        found = await asyncio.gather(*probes)
    answered = await asyncio.to_thread(_mark_kernels, [s for s in found if s is not None])
    first = embedded() if embedded_model else []
    return [*first, *answered]


def _port(url: str) -> int | None:
    try:
        parts = urlsplit(url)
        return parts.port or {"http": 80, "https": 443}.get(parts.scheme)
    except ValueError:
        return None


def _mark_kernels(servers: list[FoundServer]) -> list[FoundServer]:
    """*servers*, those on a loopback port a cave kernel listens on emptied and marked."""
    ports = {_port(s.base_url) for s in servers if is_loopback(s.base_url)} - {None}
    owned = kernel_ports(p for p in ports if p is not None) if ports else set()
    return [
        dataclasses.replace(s, models=(), kernel_owned=True)
        if is_loopback(s.base_url) and _port(s.base_url) in owned
        else s
        for s in servers
    ]


def embedded() -> list[FoundServer]:
    """The embedded model, when it is installed (it needs no server running to be listed)."""
    from cave_tui.models.local import weights
    from cave_tui.models.local.server import DEFAULT_CONTEXT

    if not weights.bundled_available():
        return []
    model = FoundModel(name=weights.BUNDLED_ALIAS, model="local", context_window=DEFAULT_CONTEXT)
    return [FoundServer(ServerKind.EMBEDDED, "Embedded model", "", (model,))]


def describe_found(servers: list[FoundServer]) -> list[str]:
    """Lines for `cave models` and `/model`: each server, then its models' options."""
    if not servers:
        return [
            "No local model server answered (Ollama on 11434; llama.cpp, vLLM, LM Studio",
            "on their default ports; CAVE_SERVERS=URL,... adds others).",
        ]
    lines: list[str] = []
    for server in servers:
        if server.kernel_owned:
            lines.append(
                f"{server.label} at {server.base_url}: kernel-owned, not offered (a cave "
                "kernel listens there; it is not a model server)"
            )
        elif server.kind is ServerKind.EMBEDDED:
            lines.append(f"{server.label} (installed; cave starts it when it is used)")
        else:
            count = f"{len(server.models)} model{'s' * (len(server.models) != 1)}"
            lines.append(printable_line(f"{server.label} at {server.base_url} ({count})"))
        for found in server.models:
            window = f"  [context {found.context_window:,}]" if found.context_window else ""
            lines.append(printable_line(f"  {found.flags}{window}"))
    return lines


async def served_context_window(
    model_id: str, api_base: str, *, timeout: float = PROBE_TIMEOUT
) -> int | None:
    """The context size the OpenAI-compatible server at *api_base* runs *model_id* with
    (vLLM's `max_model_len`, llama.cpp's `n_ctx`), or None when it does not say."""
    base = api_base.rstrip("/")
    name = model_id.split("/", 1)[1] if model_id.startswith("openai/") else model_id
    limit = httpx.Timeout(timeout)
    verify = tls_context(base, trust_env=False)
    async with httpx.AsyncClient(timeout=limit, trust_env=False, verify=verify) as client:
        try:
            listing = _entries(await _json(client, f"{base}/models"), "data") or []
        except (httpx.HTTPError, ValueError):
            return None  # not a server that lists its models: ask no further
        for entry in listing:
            if entry.get("id") == name and _positive(entry.get("max_model_len")):
                return _positive(entry.get("max_model_len"))
        return await _llama_cpp_context(client, base)
