"""A kernel posing as a local model server (issue 30): a real unsandboxed kernel listens on
the host's loopback and answers as Ollama and as an OpenAI-compatible server; discovery
lists neither as a model, while a server the host started is listed.

The kernel keeps the host's network (`allow_net=True`), as a kernel without a network
namespace of its own does (item 1's namespace would hide its port from the host anyway)."""

from __future__ import annotations

import asyncio
import socket

import pytest

from cave_tui.models.base import ModelError
from cave_tui.models.credentials import Credentials
from cave_tui.models.discovery import describe_found, discover
from cave_tui.models.listeners import LAUNCHER_TAIL, kernel_ports
from cave_tui.models.litellm_model import LiteLLMModel
from cave_tui.models.openai_http import OpenAIHTTPModel
from cave_tui.runtime.kernel.process import LAUNCHER
from tests.helpers.json_server import JsonRoutesServer
from tests.runtime.kernel.conftest import make_runtime

MODELS = {"object": "list", "data": [{"id": "gpt-posing", "owned_by": "llamacpp"}]}
POSE = (
    f"MODELS = {MODELS!r}\n"
    + """
import json, threading, subprocess, sys
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
posted = []
class Pose(BaseHTTPRequestHandler):
    def log_message(self, *a): pass
    def do_POST(self):
        posted.append(self.path)
        self.do_GET()
    def do_GET(self):
        routes = {"/v1/models": MODELS, "/api/tags": {"models": [{"name": "posing:7b"}]}}
        data = json.dumps(routes.get(self.path, {})).encode()
        self.send_response(200); self.send_header("content-length", str(len(data)))
        self.end_headers(); self.wfile.write(data)
pose = ThreadingHTTPServer(("127.0.0.1", 0), Pose)
threading.Thread(target=pose.serve_forever, daemon=True).start()
# a second one in a grandchild that left its parent (the launcher reaps it as subreaper)
child = subprocess.Popen([sys.executable, "-c", '''
import os, sys, http.server, socketserver
if os.fork(): os._exit(0)
os.setsid()
srv = http.server.ThreadingHTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
print(srv.server_address[1], flush=True)
srv.serve_forever()
'''], stdout=subprocess.PIPE, text=True)
ports = (pose.server_address[1], int(child.stdout.readline()))
"""
)


@pytest.fixture(scope="module")
def posing():
    runtime = make_runtime(allow_net=True)
    asyncio.run(runtime.start())
    result = asyncio.run(runtime.execute(POSE))
    assert result.success, result.error_text
    yield runtime, asyncio.run(runtime.retrieve("ports"))
    asyncio.run(runtime.stop())


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


async def test_discovery_never_offers_a_server_the_kernel_listens_on(posing):
    _, (port, _) = posing
    url = f"http://127.0.0.1:{port}"
    with JsonRoutesServer({"/v1/models": MODELS}) as real:
        servers = await discover(
            env={"OLLAMA_HOST": url},
            openai_urls=[("server", f"{url}/v1"), ("server", f"{real.url}/v1")],
            embedded_model=False,
        )
    by_url = {s.base_url: s for s in servers}
    assert set(by_url) == {url, f"{url}/v1", f"{real.url}/v1"}  # all answered
    for posed in (by_url[url], by_url[f"{url}/v1"]):
        assert posed.kernel_owned and posed.models == ()
    assert [m.name for m in by_url[f"{real.url}/v1"].models] == ["gpt-posing"]
    lines = describe_found(servers)
    assert sum("kernel-owned, not offered" in line for line in lines) == 2
    assert not any("posing:7b" in line for line in lines)
    assert sum("gpt-posing" in line for line in lines) == 1  # the host's server only


def test_a_daemon_the_kernel_left_behind_is_still_the_kernels(posing):
    _, (port, daemon_port) = posing
    with JsonRoutesServer({}) as real:
        host_port = real.server_address[1]
        assert kernel_ports([port, daemon_port, host_port, _closed_port()]) == {
            port,
            daemon_port,
        }


def test_the_launcher_is_recognised_by_its_path():
    assert LAUNCHER.endswith("/" + LAUNCHER_TAIL)


@pytest.mark.parametrize("client", [LiteLLMModel, OpenAIHTTPModel], ids=["litellm", "light"])
async def test_a_named_url_the_kernel_holds_gets_neither_key_nor_conversation(posing, client):
    runtime, (port, _) = posing
    url = f"http://127.0.0.1:{port}/v1"
    keys = Credentials({"OPENAI_API_KEY": "sk-test-never-sent"})
    model = client("openai/m", api_base=url, credentials=keys, max_retries=0)
    with pytest.raises(ModelError, match="a cave kernel listens there"):
        async for _ in model.stream([{"role": "user", "content": "the conversation"}]):
            pass
    assert await runtime.retrieve("posted") == []
