"""An unsandboxed kernel on a root host has a network of its own, loopback only (issue 30):
a server it starts on 127.0.0.1 is unreachable from the host (it cannot pose as a local model
server), and the host's loopback services are unreachable from it; the host still talks to
it (over Unix sockets). With `allow_net` it keeps the host's network
(test_kernel_posing_server.py shows that side)."""

from __future__ import annotations

import asyncio
import os
import socket

import pytest

from cave_tui.runtime.kernel.netns import private_network_problem
from tests.runtime.kernel.conftest import make_runtime

pytestmark = pytest.mark.skipif(os.geteuid() != 0, reason="a root host's feature")

LISTEN = """
import socket, threading
srv = socket.socket()
srv.bind(("127.0.0.1", 0))
srv.listen()
port = srv.getsockname()[1]
def answer():
    while True:
        conn, _ = srv.accept()
        conn.sendall(b"from the kernel"); conn.close()
threading.Thread(target=answer, daemon=True).start()
with socket.create_connection(("127.0.0.1", port), timeout=5) as c:  # its own loopback works
    own = c.recv(100)
"""


@pytest.fixture(scope="module")
def kernel():
    runtime = make_runtime()
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


def test_this_root_host_can_give_a_kernel_its_own_network():
    assert private_network_problem() is None


async def test_a_kernels_listening_port_is_unreachable_from_the_host(kernel):
    assert kernel.private_network
    result = await kernel.execute(LISTEN)
    assert result.success, result.error_text
    assert await kernel.retrieve("own") == b"from the kernel"
    port = await kernel.retrieve("port")
    with pytest.raises(OSError):  # refused: nothing listens there in the host's namespace
        socket.create_connection(("127.0.0.1", port), timeout=5).close()


async def test_the_hosts_loopback_is_unreachable_from_the_kernel(kernel):
    with socket.socket() as host_server:
        host_server.bind(("127.0.0.1", 0))
        host_server.listen()
        port = host_server.getsockname()[1]
        cell = (
            "import socket\ntry:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=3).close()\n"
            "    reached = True\nexcept OSError:\n    reached = False\n"
        )
        result = await kernel.execute(cell)
        assert result.success, result.error_text
        assert await kernel.retrieve("reached") is False


def test_cave_sandbox_says_which_network_an_unsandboxed_kernel_gets():
    from cave_tui.app.sandbox_report import unsandboxed_network

    assert unsandboxed_network(False).endswith("its own (its own loopback only)")
    assert "the host's network (--allow-net)" in unsandboxed_network(True)
