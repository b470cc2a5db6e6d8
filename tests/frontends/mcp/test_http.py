"""`cave mcp --http`: a real server process on a free loopback port, reached by the SDK's
streamable HTTP client, by raw HTTP requests (no token, a wrong one, a foreign Origin or
Host) and by a third-party client (the MCP Inspector's CLI over HTTP)."""

from __future__ import annotations

import json
import queue
import re
import signal
import socket
import subprocess
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from mcp import Client, MCPError
from mcp.client.streamable_http import streamable_http_client
from mcp.shared._httpx_utils import create_mcp_http_client

from cave_tui.frontends.mcp.http import announce
from cave_tui.frontends.mcp.http_socket import (
    HttpAddress,
    HttpSetupError,
    listen,
    parse_address,
    token_from,
)
from tests.frontends.mcp.conftest import cave_mcp_command, cave_mcp_env
from tests.frontends.mcp.test_kernel_and_inspector import inspector_cli
from tests.frontends.mcp.test_stdio_tools import text_of

DEADLINE = 60.0  # seconds: a hang guard on a loaded machine, not a speed figure
pytestmark = pytest.mark.xdist_group("mcp_http")  # one worker: the module's server is shared
INIT = {
    "jsonrpc": "2.0",
    "id": 1,
    "method": "initialize",
    "params": {
        "protocolVersion": "2025-06-18",
        "capabilities": {},
        "clientInfo": {"name": "raw", "version": "0"},
    },
}
MCP_HEADERS = {"Accept": "application/json, text/event-stream"}


class HttpServer:
    """`cave mcp --in-process --http 127.0.0.1:0 FLAGS` in *folder*: its URL and token as it
    printed them on stderr (every stderr line kept in `said`)."""

    def __init__(self, folder: Path, *flags: str) -> None:
        command = cave_mcp_command(
            "--in-process", "--http", "127.0.0.1:0", "--sessions-dir", "sessions", *flags
        )
        self.process = subprocess.Popen(
            command,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            text=True,
            env=cave_mcp_env(),
            cwd=folder,
            # Ctrl+C as from a terminal, even when the test runner ignores SIGINT
            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
        )
        self.said: list[str] = []
        lines: queue.Queue[str] = queue.Queue()
        threading.Thread(target=self._read, args=(lines,), daemon=True).start()
        deadline = time.monotonic() + DEADLINE
        while True:
            line = lines.get(timeout=max(0.1, deadline - time.monotonic()))
            assert line, "cave mcp ended before it listened:\n" + "".join(self.said)
            found = re.search(r"cave mcp: (http://\S+) token: (\S+)", line)
            if found:
                self.url, self.token = found.groups()
                break
        self.port = int(self.url.rsplit(":", 1)[1].split("/")[0])

    def _read(self, lines: queue.Queue[str]) -> None:
        assert self.process.stderr is not None
        for line in self.process.stderr:
            self.said.append(line)
            lines.put(line)
        lines.put("")

    def client(self, token: str | None = None) -> Client:
        """The SDK's client over streamable HTTP, with *token* (default: the right one)."""
        bearer = {"Authorization": f"Bearer {token or self.token}"}
        http = create_mcp_http_client(headers=bearer)
        return Client(streamable_http_client(self.url, http_client=http), read_timeout_seconds=60)

    def post(self, headers: dict[str, str]) -> httpx.Response:
        """An initialize request with *headers* (over the default JSON and Accept headers)."""
        return httpx.post(self.url, json=INIT, headers={**MCP_HEADERS, **headers}, timeout=30)

    def stop(self, sig: signal.Signals = signal.SIGTERM) -> int:
        """Send *sig* (if it still runs); its exit code."""
        if self.process.poll() is None:
            self.process.send_signal(sig)
        return self.process.wait(timeout=DEADLINE)


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[HttpServer]:
    running = HttpServer(tmp_path_factory.mktemp("mcp_http"))
    yield running
    running.stop()


async def test_sdk_client_runs_and_describes_over_http(server: HttpServer) -> None:
    async with server.client() as client:
        tools = await client.list_tools()
        assert {"run", "describe", "list_variables"} <= {tool.name for tool in tools.tools}
        result = await client.call_tool("run", {"code": "print(6 * 7)"})
        assert not result.is_error and text_of(result) == "Output:\n42"
        result = await client.call_tool(
            "run", {"code": "import pandas as pd\nframe = pd.DataFrame({'x': [1, 2]})"}
        )
        assert not result.is_error, text_of(result)
        result = await client.call_tool("describe", {"name": "frame"})
        assert "**frame**: DataFrame" in text_of(result)


async def test_a_missing_or_wrong_token_is_401_and_the_server_keeps_serving(
    server: HttpServer,
) -> None:
    missing = server.post({})
    assert missing.status_code == 401
    assert missing.headers["www-authenticate"].startswith("Bearer")
    for refused in (
        {"Authorization": "Bearer not-the-token"},
        {"Authorization": f"Bearer {server.token}x"},
        {"Authorization": f"Basic {server.token}"},
        {"Authorization": server.token},
    ):
        assert server.post(refused).status_code == 401, refused
    assert server.post({"Authorization": f"bearer {server.token}"}).status_code == 200
    with pytest.raises(ExceptionGroup) as failed:  # the SDK's client cannot initialize
        async with server.client(token="wrong-token-0123456789") as client:
            await client.list_tools()
    assert failed.group_contains(MCPError, depth=2)
    async with server.client() as client:  # still serving
        result = await client.call_tool("run", {"code": "print('still here')"})
        assert text_of(result) == "Output:\nstill here"


def test_a_foreign_origin_is_refused(server: HttpServer) -> None:
    bearer = {"Authorization": f"Bearer {server.token}"}
    for origin in ("http://evil.example", "null", f"http://evil.example:{server.port}"):
        answer = server.post({**bearer, "Origin": origin})
        assert answer.status_code == 403, origin
    for origin in (f"http://localhost:{server.port}", "http://127.0.0.1:6274"):
        assert server.post({**bearer, "Origin": origin}).status_code == 200, origin


def test_a_foreign_host_is_refused(server: HttpServer) -> None:
    bearer = {"Authorization": f"Bearer {server.token}"}
    for host in (
        f"evil.example:{server.port}",
        "127.0.0.1:1",
        f"localhost.evil.example:{server.port}",
    ):
        # DNS rebinding: a name the attacker controls, resolved to 127.0.0.1
        assert server.post({**bearer, "Host": host}).status_code == 421, host
    assert server.post({**bearer, "Host": f"localhost:{server.port}"}).status_code == 200
    # without the token, a foreign Host is refused all the same (the checks come first)
    assert server.post({"Host": f"evil.example:{server.port}"}).status_code == 421


def _inspector_http(server: HttpServer, *args: str) -> dict[str, object]:
    """The Inspector CLI's JSON answer from *server* over streamable HTTP."""
    bearer = f"Authorization: Bearer {server.token}"
    return inspector_cli(server.url, "--transport", "http", "--header", bearer, *args)


def test_inspector_cli_over_http_lists_tools_runs_and_describes(server: HttpServer) -> None:
    listed = _inspector_http(server, "--method", "tools/list")
    tools = listed["tools"]
    assert isinstance(tools, list)
    assert {"run", "describe", "list_variables", "inject", "retrieve"} <= {t["name"] for t in tools}
    call = ("--method", "tools/call", "--tool-name")
    ran = _inspector_http(server, *call, "run", "--tool-arg", "code=seen = [6 * 7]")
    assert ran["isError"] is False, ran
    described = _inspector_http(server, *call, "describe", "--tool-arg", "name=seen")
    assert described["isError"] is False, described
    content = described["content"]
    assert isinstance(content, list) and "**seen**: list" in content[0]["text"]


@pytest.mark.parametrize(
    ("sig", "status"), [(signal.SIGTERM, "terminated"), (signal.SIGINT, "cancelled")]
)
async def test_sigterm_or_ctrl_c_ends_it_with_the_exit_hooks(
    tmp_path: Path, sig: signal.Signals, status: str
) -> None:
    running = HttpServer(tmp_path, "--dump", "dump")
    async with running.client() as client:
        result = await client.call_tool("run", {"code": "kept = 41 + 1"})
        assert not result.is_error, text_of(result)
    assert running.stop(sig) == 128 + sig  # 143 for SIGTERM, 130 for Ctrl+C
    manifest = json.loads((tmp_path / "dump" / "manifest.json").read_text())
    assert "kept" in json.dumps(manifest)
    (session,) = (tmp_path / "sessions").iterdir()
    last = json.loads((session / "events.jsonl").read_text().splitlines()[-1])
    assert last == {**last, "type": "closed", "status": status}
    said = "".join(running.said)
    assert "claude mcp add --transport http cave " + running.url in said
    assert f'--header "Authorization: Bearer {running.token}"' in said


def test_bad_addresses_and_tokens_are_refused_before_the_start() -> None:
    assert parse_address("8123") == HttpAddress("127.0.0.1", 8123)
    assert parse_address(":0") == HttpAddress("127.0.0.1", 0)
    assert parse_address("[::1]:9") == HttpAddress("::1", 9)
    assert parse_address("localhost:80") == HttpAddress("localhost", 80)
    for bad in ("", "host", "1.2.3.4:x", "::1:80", "127.0.0.1:70000"):
        with pytest.raises(HttpSetupError):
            parse_address(bad)
    assert len(token_from({})) >= 40 and token_from({}) != token_from({})
    assert token_from({"CAVE_MCP_TOKEN": "a-fixed-token-0123"}) == "a-fixed-token-0123"
    for weak in ("short", "has a space in it ok", ""):
        with pytest.raises(HttpSetupError):
            token_from({"CAVE_MCP_TOKEN": weak})
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        with pytest.raises(HttpSetupError, match="cannot listen"):
            listen(HttpAddress("127.0.0.1", taken.getsockname()[1]), "t" * 20)


def test_a_port_in_use_exits_2_before_the_runtime_starts(tmp_path: Path) -> None:
    with socket.socket() as taken:
        taken.bind(("127.0.0.1", 0))
        taken.listen()
        port = taken.getsockname()[1]
        done = subprocess.run(
            cave_mcp_command("--in-process", "--http", f"127.0.0.1:{port}"),
            env=cave_mcp_env(),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=DEADLINE,
        )
    assert done.returncode == 2
    assert f"cave: --http: cannot listen on 127.0.0.1:{port}" in done.stderr
    assert not (tmp_path / "sessions").exists()  # nothing was started


def test_a_wildcard_bind_warns_that_it_is_reachable(capsys: pytest.CaptureFixture[str]) -> None:
    listener = listen(HttpAddress("0.0.0.0", 0), "t" * 20)
    try:
        assert listener.wildcard and not listener.loopback
        assert listener.security().enable_dns_rebinding_protection is False
        announce(listener)
    finally:
        listener.close()
    said = capsys.readouterr().err
    assert "WARNING: listening on 0.0.0.0, not loopback" in said
    assert "Host and Origin headers are not checked" in said
    loopback = listen(HttpAddress("127.0.0.1", 0), "t" * 20)
    try:
        settings = loopback.security()
        assert settings.enable_dns_rebinding_protection
        assert settings.allowed_hosts == sorted(
            [f"127.0.0.1:{loopback.port}", f"localhost:{loopback.port}"]
        )
    finally:
        loopback.close()


async def test_over_http_too_the_server_declares_resource_list_changes(server: HttpServer) -> None:
    """The SDK's session manager builds its own options: cave's must reach 2025 clients."""
    bearer = {"Authorization": f"Bearer {server.token}"}
    transport = streamable_http_client(server.url, http_client=create_mcp_http_client(bearer))
    async with Client(transport, read_timeout_seconds=60, mode="legacy") as client:
        declared = client.session.server_capabilities
        assert declared is not None and declared.resources is not None
        assert declared.resources.subscribe and declared.resources.list_changed
