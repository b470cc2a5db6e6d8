"""Protocol front ends: what a cell costs through `cave mcp` (stdio, HTTP) and `cave acp` over
the Python API, and how long each takes from its start to its first answer.

    python bench/protocols.py            # round trips in process, N=200; writes
                                         # bench/results/protocols.json
    python bench/protocols.py --kernel   # round trips through the kernel on both sides
    python bench/protocols.py -n 50      # fewer calls

Round trip: `1+1` run N times, turn about, through `AppServices.run_python` (the API: the
same call the `run` tool makes, session recorded alike) and through each protocol's client
(the SDK's, over a real `cave mcp` process); per-call overhead = protocol median - API median
(target <= 5 ms). The round trips run without the embedded model (`CAVE_LOCAL_MODEL=off`):
no front end needs it for `run`, and its servers loading in the background (one per front
end, started with each agent) would be measured instead of the protocols. Over HTTP also
with `RawMCP`, a minimal keep-alive client: the SDK's Python client spends milliseconds of
its own a call, which a compiled client does not. First answer: from spawning
`cave mcp --kernel` to the reply of its first `run` (the client's initialize included;
target <= 2 s; the embedded model as configured, as a user has it), with cave's bytecode
compiled first, as an installed cave has it (`--from-source`: as the checkout is; with
PYTHONDONTWRITEBYTECODE=1 and no __pycache__, each start compiles cave's modules first).
"""

from __future__ import annotations

import argparse
import asyncio
import compileall
import http.client
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import AbstractAsyncContextManager, AsyncExitStack, asynccontextmanager
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _common import report
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from cave_tui.agent.cells import CellAuthor
from cave_tui.app.startup import DataOptions, install
from cave_tui.frontends.cli.launch import build_services

ROOT = Path(__file__).resolve().parent.parent
CELL = "1+1"
OVERHEAD_TARGET_MS = 5.0
FIRST_ANSWER_TARGET_S = 2.0

RoundTrip = Callable[[str], Awaitable[None]]  # runs one cell, returns once it is answered
# A protocol: started in a folder with `cave mcp`-style flags, yields its RoundTrip.
Protocol = Callable[[Path, list[str]], AbstractAsyncContextManager[RoundTrip]]


def cave_command(*args: str) -> list[str]:
    """The installed `cave` script (not `python -m`, which puts the working folder on
    sys.path, where the sandboxed kernel may not write)."""
    return [str(Path(sys.executable).parent / "cave"), *args]


def cave_env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT), env.get("PYTHONPATH")]))
    return env


@asynccontextmanager
async def api(folder: Path, flags: list[str]) -> AsyncIterator[RoundTrip]:
    """The baseline: the app layer in this process, as `cave mcp` builds and records it."""
    services = build_services({"kernel": "--kernel" in flags}, need_model=False)
    install(services, DataOptions(sessions_dir=folder / "api-sessions"), announce=False)
    await services.start()

    async def call(code: str) -> None:
        async for _ in services.run_python(code, author=CellAuthor.CLIENT):
            pass

    try:
        yield call
    finally:
        await services.shutdown()


async def _run_tool(client: Client, code: str) -> None:
    result = await client.call_tool("run", {"code": code})
    if result.is_error:
        raise RuntimeError(f"run {code!r} failed: {result.content}")


@asynccontextmanager
async def mcp_stdio(folder: Path, flags: list[str]) -> AsyncIterator[RoundTrip]:
    """`cave mcp FLAGS` spawned by the SDK's stdio client."""
    command, *args = cave_command("mcp", *flags, "--sessions-dir", str(folder / "sessions"))
    server = StdioServerParameters(command=command, args=args, env=cave_env(), cwd=folder)
    async with Client(server, read_timeout_seconds=120) as client:
        yield lambda code: _run_tool(client, code)


@asynccontextmanager
async def http_server(folder: Path, flags: list[str]) -> AsyncIterator[tuple[str, str]]:
    """`cave mcp --http 127.0.0.1:0 FLAGS` running: its URL and token."""
    command = cave_command(
        "mcp", "--http", "127.0.0.1:0", *flags, "--sessions-dir", str(folder / "sessions")
    )
    process = await asyncio.create_subprocess_exec(
        *command, cwd=folder, env=cave_env(), stderr=subprocess.PIPE
    )
    assert process.stderr is not None
    drain: asyncio.Future[bytes] | None = None
    try:
        while True:
            line = (await asyncio.wait_for(process.stderr.readline(), 120)).decode()
            if not line:
                raise RuntimeError("cave mcp --http ended before it listened")
            found = re.search(r"cave mcp: (http://\S+) token: (\S+)", line)
            if found:
                url, token = found.groups()
                break
        drain = asyncio.ensure_future(process.stderr.read())  # never let stderr fill up
        yield url, token
    finally:
        if process.returncode is None:
            process.terminate()
            await process.wait()
        if drain is not None:
            drain.cancel()


@asynccontextmanager
async def mcp_http(folder: Path, flags: list[str]) -> AsyncIterator[RoundTrip]:
    """`cave mcp --http 127.0.0.1:0 FLAGS`, reached by the SDK's streamable HTTP client."""
    async with http_server(folder, flags) as (url, token):
        http = create_mcp_http_client(headers={"Authorization": f"Bearer {token}"})
        async with http, Client(streamable_http_client(url, http_client=http)) as client:
            yield lambda code: _run_tool(client, code)


# The protocol version RawMCP speaks: the last of 2025, what the clients in use today speak
# (answers as event streams; 2026-07-28's own wire adds per-request headers and envelopes).
RAW_VERSION = "2025-11-25"


class RawMCP:
    """A minimal streamable-HTTP MCP client: one keep-alive HTTP/1.1 connection, JSON-RPC
    posted as is, the answer read as JSON or as an event stream. What the server costs a
    call, with as little client as a compiled client (a Node or Rust one) spends."""

    def __init__(self, url: str, token: str) -> None:
        parts = urlsplit(url)
        self.path = parts.path or "/"
        self.connection = http.client.HTTPConnection(parts.hostname, parts.port, timeout=120)
        self.headers = {
            "Authorization": f"Bearer {token}",
            "Content-Type": "application/json",
            "Accept": "application/json, text/event-stream",
        }
        self.ids = 0

    def post(self, method: str, params: dict[str, Any], notify: bool = False) -> Any:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method, "params": params}
        if not notify:
            self.ids += 1
            message["id"] = self.ids
        try:
            response, body = self._exchange(json.dumps(message))
        except (BrokenPipeError, ConnectionResetError, http.client.RemoteDisconnected):
            # uvicorn closes a connection idle for 5 s (another front end was starting):
            # a new one, in the same MCP session, as any HTTP client does
            self.connection.close()
            response, body = self._exchange(json.dumps(message))
        if response.status >= 400:
            raise RuntimeError(f"{method}: HTTP {response.status}: {body[:300]!r}")
        session = response.getheader("mcp-session-id")
        if session:
            self.headers["Mcp-Session-Id"] = session
        if notify:
            return None
        if response.getheader("content-type", "").startswith("text/event-stream"):
            for line in body.decode().splitlines():
                if line.startswith("data:"):
                    reply = json.loads(line[5:])
                    if reply.get("id") == message["id"]:
                        return reply
            raise RuntimeError(f"{method}: no answer in the event stream")
        return json.loads(body)

    def _exchange(self, body: str) -> tuple[http.client.HTTPResponse, bytes]:
        self.connection.request("POST", self.path, body, self.headers)
        response = self.connection.getresponse()
        return response, response.read()

    def run(self, code: str) -> None:
        reply = self.post("tools/call", {"name": "run", "arguments": {"code": code}})
        if "error" in reply or reply["result"].get("isError"):
            raise RuntimeError(f"run {code!r} failed: {reply}")


@asynccontextmanager
async def mcp_http_raw(folder: Path, flags: list[str]) -> AsyncIterator[RoundTrip]:
    """`cave mcp --http`, reached by `RawMCP` (the server's share of a call over HTTP)."""
    async with http_server(folder, flags) as (url, token):
        client = RawMCP(url, token)
        info = {"name": "bench-raw", "version": "1"}
        version = RAW_VERSION
        client.post(
            "initialize",
            {"protocolVersion": version, "capabilities": {}, "clientInfo": info},
        )
        client.headers["MCP-Protocol-Version"] = version
        client.post("notifications/initialized", {}, notify=True)

        async def call(code: str) -> None:
            client.run(code)  # blocking: nothing else runs on this loop meanwhile

        try:
            yield call
        finally:
            client.connection.close()


class _QuietClient:
    """An ACP client that takes the session updates and refuses every permission."""

    async def session_update(self, session_id: str, update: Any, **kwargs: Any) -> None:
        return None

    async def request_permission(self, *args: Any, **kwargs: Any) -> Any:
        from acp.schema import DeniedOutcome, RequestPermissionResponse

        return RequestPermissionResponse(outcome=DeniedOutcome(outcome="cancelled"))


@asynccontextmanager
async def acp_stdio(folder: Path, flags: list[str]) -> AsyncIterator[RoundTrip]:
    """`cave acp FLAGS` spawned by the SDK's client; a cell is a `!code` prompt (the user's
    own cell, no model), answered once the prompt returns."""
    from acp import PROTOCOL_VERSION, spawn_agent_process, text_block

    command, *args = cave_command("acp", *flags, "--sessions-dir", str(folder / "sessions"))
    async with spawn_agent_process(_QuietClient(), command, *args, env=cave_env(), cwd=folder) as (
        conn,
        _process,
    ):
        await conn.initialize(protocol_version=PROTOCOL_VERSION)
        session = (await conn.new_session(cwd=str(folder))).session_id

        async def call(code: str) -> None:
            await conn.prompt(session_id=session, prompt=[text_block(f"!{code}")])

        yield call


# ---------------------------------------------------------------------------------------
# The protocols measured, one row each: an asynccontextmanager `(folder, flags)` that
# starts the front end with its client and yields a RoundTrip running one cell.
PROTOCOLS: list[tuple[str, Protocol]] = [
    ("MCP stdio", mcp_stdio),
    ("MCP HTTP", mcp_http),
    ("MCP HTTP (raw client)", mcp_http_raw),
    ("ACP stdio", acp_stdio),
]
# ---------------------------------------------------------------------------------------


async def round_trips(calls: int, flags: list[str], folder: Path) -> dict[str, list[float]]:
    """Seconds per `CELL` for the API and each protocol, N calls each, turn about (without
    the embedded model: see the module's docstring)."""
    targets: list[tuple[str, Protocol]] = [("API", api), *PROTOCOLS]
    samples: dict[str, list[float]] = {name: [] for name, _ in targets}
    before = os.environ.get("CAVE_LOCAL_MODEL")
    os.environ["CAVE_LOCAL_MODEL"] = "off"  # read by `api` here and by each spawned front end
    try:
        async with all_started(targets, folder, flags) as trips:
            return await _turn_about(calls, trips, samples)
    finally:
        if before is None:
            del os.environ["CAVE_LOCAL_MODEL"]
        else:
            os.environ["CAVE_LOCAL_MODEL"] = before


async def _turn_about(
    calls: int, trips: dict[str, RoundTrip], samples: dict[str, list[float]]
) -> dict[str, list[float]]:
    """*calls* round trips of `CELL` through each of *trips*, in turn, after a warm-up."""
    for trip in trips.values():  # warm-up: imports, first cell
        for _ in range(5):
            await trip(CELL)
    for _ in range(calls):
        for name, trip in trips.items():
            started = time.perf_counter()
            await trip(CELL)
            samples[name].append(time.perf_counter() - started)
    return samples


@asynccontextmanager
async def all_started(
    targets: list[tuple[str, Protocol]], folder: Path, flags: list[str]
) -> AsyncIterator[dict[str, RoundTrip]]:
    """Every target started, each in its own folder under *folder*."""
    async with AsyncExitStack() as stack:
        trips: dict[str, RoundTrip] = {}
        for name, protocol in targets:
            place = folder / name.replace(" ", "-")
            place.mkdir()
            trips[name] = await stack.enter_async_context(protocol(place, flags))
        yield trips


async def first_answer(protocol: Protocol, folder: Path) -> float:
    """Seconds from starting the front end with `--kernel` to its first answer."""
    started = time.perf_counter()
    async with protocol(folder, ["--kernel"]) as trip:
        await trip(CELL)
        return time.perf_counter() - started


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("-n", "--calls", type=int, default=200)
    parser.add_argument("--kernel", action="store_true", help="round trips through the kernel")
    parser.add_argument("--starts", type=int, default=3, help="first-answer repetitions")
    parser.add_argument(
        "--from-source", action="store_true", help="do not compile cave's bytecode first"
    )
    args = parser.parse_args()
    if not args.from_source:  # what pip does at install; the checkout's __pycache__ is ignored
        compileall.compile_dir(ROOT / "cave_tui", quiet=1)
    flags = ["--kernel" if args.kernel else "--in-process"]
    rows: list[dict[str, Any]] = []
    runtime = "kernel" if args.kernel else "in process"
    with tempfile.TemporaryDirectory(prefix="cave-bench-protocols-") as tmp:
        samples = await round_trips(args.calls, flags, Path(tmp))
        base = statistics.median(samples["API"]) * 1000
        rows.append(
            {"metric": f"{CELL} via the API ({runtime}), median", "value": base, "unit": "ms"}
        )
        for name, _ in PROTOCOLS:
            median = statistics.median(samples[name]) * 1000
            rows.append({"metric": f"{CELL} via {name}, median", "value": median, "unit": "ms"})
            overhead = median - base
            rows.append(
                {
                    "metric": f"{name} overhead per call over the API",
                    "value": overhead,
                    "unit": "ms",
                    "target": f"<= {OVERHEAD_TARGET_MS:g}",
                    "ok": overhead <= OVERHEAD_TARGET_MS,
                }
            )
        for name, protocol in PROTOCOLS:
            times = []
            for i in range(args.starts):
                folder = Path(tmp) / f"start-{name.replace(' ', '-')}-{i}"
                folder.mkdir()
                times.append(await first_answer(protocol, folder))
            best = statistics.median(times)
            rows.append(
                {
                    "metric": f"{name}: start (kernel) to first answer, median",
                    "value": best,
                    "unit": "s",
                    "target": f"<= {FIRST_ANSWER_TARGET_S:g}",
                    "ok": best <= FIRST_ANSWER_TARGET_S,
                }
            )
    extra = {
        "calls": args.calls,
        "runtime": runtime,
        "bytecode": "as the checkout has it" if args.from_source else "compiled first",
        "p90_ms": {
            name: statistics.quantiles(times, n=10)[-1] * 1000 for name, times in samples.items()
        },
    }
    report("protocols", rows, extra)


if __name__ == "__main__":
    asyncio.run(main())
