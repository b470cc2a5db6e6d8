"""A kernel through a Jupyter Kernel Gateway against a local kernel: start, the `1+1` round
trip (target: the gateway's at most 2x the local one's), and a 200,000 x 10 frame retrieved.

    python bench/gateway.py            # prints a table, writes bench/results/gateway.json
    python bench/gateway.py --quick    # fewer repetitions

It starts `jupyter kernelgateway` on 127.0.0.1 (a free port, a token) and keeps both kernels
alive, measured turn about, so a shared machine's load hits both alike. `gateway_rows()` is
the rows alone, for bench/scale.py's table.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import secrets
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import httpx
import numpy as np
import pandas as pd
from _common import report

from cave_tui.runtime import Variable
from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.runtime.kernel.gateway import GatewaySpec

# `jupyter kernelgateway` without jsonschema's optional URI-format checker (rfc3987_syntax
# builds a grammar at import: seconds of CPU the gateway never uses)
KERNEL_GATEWAY = (
    "import sys; sys.modules['rfc3987_syntax'] = None; "
    "from kernel_gateway import launch_instance; launch_instance()"
)
TARGET_RATIO = 2.0


@contextmanager
def kernel_gateway() -> Iterator[GatewaySpec]:
    """A Kernel Gateway on 127.0.0.1 with a token, stopped on exit."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = int(sock.getsockname()[1])
    token = secrets.token_hex(16)
    log = Path(tempfile.mkdtemp()) / "gateway.log"
    proc = subprocess.Popen(
        [sys.executable, "-c", KERNEL_GATEWAY, "--KernelGatewayApp.ip=127.0.0.1",
         f"--KernelGatewayApp.port={port}", "--KernelGatewayApp.port_retries=0"],
        env={**os.environ, "KG_AUTH_TOKEN": token}, stdout=log.open("wb"),
        stderr=subprocess.STDOUT,
    )  # fmt: skip
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                headers = {"Authorization": f"token {token}"}
                if httpx.get(f"{url}/api", headers=headers, timeout=2).status_code == 200:
                    break
            except httpx.TransportError:
                pass
            if proc.poll() is not None or time.monotonic() > deadline:
                raise RuntimeError(f"the gateway did not start:\n{log.read_text()[-2000:]}")
            time.sleep(0.2)
        yield GatewaySpec(url, token)
    finally:
        proc.terminate()
        try:
            proc.wait(20)
        except subprocess.TimeoutExpired:
            proc.kill()


async def timed_start(runtime: IPyKernelRuntime) -> float:
    started = time.perf_counter()
    await runtime.start()
    return time.perf_counter() - started


async def one_trip(runtime: IPyKernelRuntime) -> float:
    started = time.perf_counter()
    result = await runtime.execute("1+1")
    elapsed = time.perf_counter() - started
    assert result.output == "2\n", result
    return elapsed


async def one_retrieve(runtime: IPyKernelRuntime) -> float:
    started = time.perf_counter()
    frame = await runtime.retrieve("frame")
    elapsed = time.perf_counter() - started
    assert len(frame) == ROWS
    return elapsed


ROWS = 200_000


def make_frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    data: dict[str, Any] = {f"x{i}": rng.random(ROWS) for i in range(8)}
    data["k"] = rng.integers(0, 1000, ROWS)
    data["s"] = pd.Series(rng.integers(0, 50, ROWS)).map(lambda n: f"name-{n}")
    return pd.DataFrame(data)


async def gateway_rows(quick: bool = False) -> list[dict[str, Any]]:
    """Start, round trip and frame retrieve: local kernel vs a Kernel Gateway's, turn about."""
    trips = 60 if quick else 300
    fetches = 3 if quick else 8
    frame = make_frame()
    with kernel_gateway() as spec:
        kernels = {
            "local": IPyKernelRuntime(checkpoint_bytes=0),
            "gateway": IPyKernelRuntime(checkpoint_bytes=0, gateway=spec),
        }
        starts = {name: await timed_start(rt) for name, rt in kernels.items()}
        try:
            for rt in kernels.values():
                await rt.ainject(Variable("frame", frame, "the bench frame"))
                for _ in range(10):  # warm up
                    await rt.execute("1+1")
            samples: dict[str, list[float]] = {name: [] for name in kernels}
            for _ in range(trips):
                for name, rt in kernels.items():
                    samples[name].append(await one_trip(rt))
            fetched: dict[str, list[float]] = {name: [] for name in kernels}
            for _ in range(fetches):
                for name, rt in kernels.items():
                    fetched[name].append(await one_retrieve(rt))
        finally:
            for rt in kernels.values():
                await rt.stop()
    trip = {name: statistics.median(s) * 1000 for name, s in samples.items()}
    p90 = {name: sorted(s)[int(len(s) * 0.9)] * 1000 for name, s in samples.items()}
    pull = {name: statistics.median(s) for name, s in fetched.items()}
    ratio = trip["gateway"] / trip["local"]
    return [
        {"metric": "kernel start: local", "value": round(starts["local"], 3), "unit": "s"},
        {"metric": "kernel start: gateway", "value": round(starts["gateway"], 3), "unit": "s"},
        {"metric": "round trip '1+1': local (median)", "value": round(trip["local"], 3),
         "unit": "ms"},
        {"metric": "round trip '1+1': gateway (median)", "value": round(trip["gateway"], 3),
         "unit": "ms"},
        {"metric": "round trip '1+1': local (p90)", "value": round(p90["local"], 3), "unit": "ms"},
        {"metric": "round trip '1+1': gateway (p90)", "value": round(p90["gateway"], 3),
         "unit": "ms"},
        {"metric": "round trip: gateway / local", "value": round(ratio, 2), "unit": "x",
         "target": f"<= {TARGET_RATIO:g}", "ok": ratio <= TARGET_RATIO},
        {"metric": f"retrieve {ROWS:,} x 10 frame: local", "value": round(pull["local"], 3),
         "unit": "s"},
        {"metric": f"retrieve {ROWS:,} x 10 frame: gateway", "value": round(pull["gateway"], 3),
         "unit": "s"},
    ]  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    load_before = os.getloadavg()
    rows = asyncio.run(gateway_rows(args.quick))
    rows.append({"metric": "machine load average (1 min) at start",
                 "value": round(load_before[0], 2), "unit": ""})  # fmt: skip
    report("gateway", rows, {"load_average_after": os.getloadavg()})


if __name__ == "__main__":
    main()
