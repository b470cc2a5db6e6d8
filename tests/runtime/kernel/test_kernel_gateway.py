"""The kernel runtime on a kernel that a real Jupyter Kernel Gateway starts (docs/kernel.md,
"Remote kernels"): one gateway for the file, on 127.0.0.1 with a token, on a free port."""

from __future__ import annotations

import asyncio
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import numpy as np
import pandas as pd
import pytest
import yaml

from cave_tui.runtime.items import Variable
from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.runtime.kernel.gateway import GatewayError, GatewaySpec

CAVE = str(Path(sys.executable).with_name("cave"))
TOKEN = "cave-test-token"
# `jupyter kernelgateway`, less jsonschema's optional URI-format checker: rfc3987_syntax
# builds a grammar at import (seconds of CPU) that the gateway never uses.
KERNEL_GATEWAY = (
    "import sys; sys.modules['rfc3987_syntax'] = None; "
    "from kernel_gateway import launch_instance; launch_instance()"
)
pytestmark = pytest.mark.xdist_group("kernel_gateway")


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_gateway(port: int, log: Path) -> subprocess.Popen[bytes]:
    """`jupyter kernelgateway` on 127.0.0.1:*port* with TOKEN, answering its API."""
    env = {**os.environ, "KG_AUTH_TOKEN": TOKEN}
    proc = subprocess.Popen(
        [
            sys.executable,
            "-c",
            KERNEL_GATEWAY,
            "--KernelGatewayApp.ip=127.0.0.1",
            f"--KernelGatewayApp.port={port}",
            "--KernelGatewayApp.port_retries=0",
        ],
        env=env,
        stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            reply = httpx.get(
                f"http://127.0.0.1:{port}/api",
                headers={"Authorization": f"token {TOKEN}"},
                timeout=2,
            )
            if reply.status_code == 200:
                return proc
        except httpx.TransportError:
            pass
        if proc.poll() is not None:
            break
        time.sleep(0.2)
    proc.kill()
    raise RuntimeError(f"the kernel gateway did not start:\n{log.read_text()[-2000:]}")


@pytest.fixture(scope="module")
def gateway(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    port = free_port()
    proc = start_gateway(port, tmp_path_factory.mktemp("kg") / "gateway.log")
    yield f"http://127.0.0.1:{port}"
    proc.terminate()
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()


@pytest.fixture(scope="module")
def remote(gateway: str) -> Iterator[IPyKernelRuntime]:
    frame = pd.DataFrame({"city": ["Oslo", "Lima", "Pune"], "people": [0.7, 10.0, 7.4]})
    runtime = IPyKernelRuntime(
        variables=[Variable("cities", frame, "one row per city")],
        gateway=GatewaySpec(gateway, TOKEN),
        cell_timeout=60,
        interrupt_grace=2.0,
    )
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


async def test_inject_run_and_retrieve_a_frame_through_the_gateway(remote: IPyKernelRuntime):
    result = await remote.execute(
        "import os\nbig = cities[cities.people > 5]\nprint(len(big), os.getpid())"
    )
    assert result.success, result.error_text
    assert result.output.split()[0] == "2"
    assert int(result.output.split()[1]) != os.getpid()  # another process ran it
    back = await remote.retrieve("big")  # by Arrow, in the message buffers
    assert isinstance(back, pd.DataFrame)
    assert back.city.tolist() == ["Lima", "Pune"]
    assert remote.remote is not None and remote.label == "kernel (gateway)"
    # over the 10 MiB a gateway's websocket takes in one message: sent in parts, joined there
    big = np.arange(1_600_000, dtype="float64")
    await remote.ainject(Variable("big_array", big, "12.8 MB"))
    total = await remote.execute("print(int(big_array.sum()), big_array.nbytes)")
    assert total.output.split() == [str(int(big.sum())), str(big.nbytes)], total


async def test_an_endless_loop_is_interrupted_through_the_gateway(remote: IPyKernelRuntime):
    started = time.monotonic()
    result = await remote.execute("n = 0\nwhile True:\n    n += 1", timeout=1.5)
    assert result.timed_out and result.error_type == "Timeout"
    assert "killed" not in (result.notice or "")  # the interrupt stopped it
    assert time.monotonic() - started < 20
    again = await remote.execute("print(n > 0)")
    assert again.output.strip() == "True"


async def test_a_kernel_deleted_at_the_gateway_is_restarted_with_the_namespace(
    remote: IPyKernelRuntime, gateway: str
):
    result = await remote.execute("import numpy as np\nkept = np.arange(5) * 3\ntag = 'x'")
    assert result.success, result.error_text
    await remote.namespace_summary()  # the checkpoint of that cell is taken meanwhile
    # kept on the kernel's machine: the host holds only its sizes, no byte of the values
    entries = remote._store.entries
    assert entries["kept"].kept and not entries["kept"].buffers and entries["kept"].nbytes
    kernel_id = remote.gateway_kernel_id
    reply = httpx.delete(
        f"{gateway}/api/kernels/{kernel_id}",
        headers={"Authorization": f"token {TOKEN}"},
        timeout=10,
    )
    assert reply.status_code == 204
    started = time.monotonic()
    after = await remote.execute("print(kept.tolist(), tag, len(cities))")
    assert time.monotonic() - started < 30  # noticed, not waited out to the cell timeout
    assert after.output.strip() == "[0, 3, 6, 9, 12] x 3"
    assert "shut down at the gateway" in (after.notice or "")
    assert "Restored from the last checkpoint" in (after.notice or "")
    assert remote.gateway_kernel_id != kernel_id


async def test_a_wrong_token_is_a_clear_error_at_once(gateway: str):
    runtime = IPyKernelRuntime(gateway=GatewaySpec(gateway, "not-the-token"))
    started = time.monotonic()
    with pytest.raises(GatewayError, match="token was refused") as caught:
        await runtime.start()
    assert time.monotonic() - started < 5
    assert gateway in str(caught.value)
    await runtime.stop()


async def test_a_stopped_gateway_is_a_clear_error_within_seconds(tmp_path: Path):
    port = free_port()
    proc = start_gateway(port, tmp_path / "gateway.log")
    url = f"http://127.0.0.1:{port}"
    runtime = IPyKernelRuntime(gateway=GatewaySpec(url, TOKEN), cell_timeout=60)
    try:
        await runtime.start()
        assert (await runtime.execute("x = 1")).success
        proc.terminate()
        proc.wait(20)
        started = time.monotonic()
        result = await runtime.execute("print(x)")
        assert time.monotonic() - started < 5
        said = f"{result.error_text} {result.notice}"
        assert not result.success and "is it running" in said and url in said, said
        never = IPyKernelRuntime(gateway=GatewaySpec(url, TOKEN))
        started = time.monotonic()
        with pytest.raises(GatewayError, match="is it running"):
            await never.start()
        assert time.monotonic() - started < 5
    finally:
        proc.kill()
        await runtime.stop()


def test_cave_run_on_the_gateway_says_the_sandbox_does_not_apply(gateway: str, tmp_path: Path):
    (tmp_path / "data.csv").write_text("a,b\n1,2\n3,4\n")
    replies = ["```python\nimport os\nprint('ROWS', len(data), os.getpid())\n```", "done"]
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(replies))
    env = {k: v for k, v in os.environ.items() if not k.startswith("CAVE_")}
    env.update(CAVE_CONFIG_DIR=str(tmp_path / "config"), CAVE_DATA_DIR=str(tmp_path / "data"))
    (tmp_path / "config").mkdir()
    # the token from the [kernel] table of the config file, the URL from the flag
    (tmp_path / "config" / "config.toml").write_text(f'[kernel]\ngateway_token = "{TOKEN}"\n')
    done = subprocess.run(
        [CAVE, "run", "go", "--model", f"scripted:{tmp_path / 'm.yaml'}", "--gateway", gateway,
         "--inject", f"{tmp_path / 'data.csv'}:data"],
        cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert f"the Jupyter gateway at {gateway}: this host's sandbox does not apply" in done.stderr
    assert "ROWS 2" in done.stdout, done.stdout


async def test_a_dropped_websocket_is_reconnected_and_the_cell_finishes(remote: IPyKernelRuntime):
    running = asyncio.ensure_future(
        remote.execute("import time\ntime.sleep(1.0)\nprint('after the drop')")
    )
    await asyncio.sleep(0.3)
    kernel = remote._gateway_kernel
    assert kernel is not None and kernel.channel is not None
    old = kernel.channel.ws

    async def drop() -> None:
        old.close()  # the connection goes; the kernel and the gateway stay

    assert remote._io is not None
    await asyncio.wrap_future(remote._io.submit(drop()))
    result = await asyncio.wait_for(running, 30)
    assert result.success and result.output.strip() == "after the drop", result
    assert kernel.channel.ws is not old and not result.notice  # the same kernel, reconnected


@pytest.mark.skipif(not hasattr(socket, "TCP_QUICKACK"), reason="TCP_QUICKACK is Linux's")
def test_the_websocket_acknowledges_at_once_and_a_closed_socket_is_left_alone() -> None:
    """The 40 ms a delayed ACK adds to every gateway round trip (bench/gateway.py)."""
    from types import SimpleNamespace

    from cave_tui.runtime.kernel.gateway import _QuickAck

    with socket.create_server(("127.0.0.1", 0)) as server:
        client = socket.create_connection(server.getsockname())
        accepted, _ = server.accept()
        ack = _QuickAck(SimpleNamespace(stream=SimpleNamespace(socket=client)))  # type: ignore[arg-type]
        client.setsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK, 0)
        ack.arm()
        assert client.getsockopt(socket.IPPROTO_TCP, socket.TCP_QUICKACK) == 1
        client.close()
        ack.arm()  # closed: no error, and never tried again
        assert ack._socket is None
        accepted.close()
