"""Kernel-runtime figures: start, `1+1` round trip, moving a 1M-row frame, death detection.

    python bench/kernel.py            # prints a table, writes bench/results/kernel.json
    python bench/kernel.py --quick    # fewer repetitions
    python bench/kernel.py --sandbox  # the same kernel under bubblewrap, next to the plain one
                                      # (writes bench/results/kernel-sandbox.json)
    python bench/kernel.py --inject-parquet  # /inject of a 1M-row parquet: kernel, in process
                                      # and read_table().to_pandas() (kernel-inject.json)
    python bench/kernel.py --decode   # retrieves with the decode worker (the default) next to
                                      # decoding in the host (decode_in_worker=False),
                                      # and a 2,000-name session snapshot
                                      # (writes bench/results/kernel-decode.json)

The frame transfers are measured against the upstream way on the same frame in the
same run: base64 of dill bytes inside generated source code (inject), and base64 of
dill bytes brought back as a user expression (retrieve).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import os
import signal
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
import dill
import numpy as np
import pandas as pd
from _common import report

from cave_tui.runtime import Variable
from cave_tui.runtime.kernel import IPyKernelRuntime

ROWS, COLS = 1_000_000, 10


def make_frame() -> pd.DataFrame:
    rng = np.random.default_rng(0)
    data: dict[str, Any] = {f"f{i}": rng.random(ROWS) for i in range(7)}
    data["i0"] = rng.integers(0, 1_000_000, ROWS)
    data["i1"] = np.arange(ROWS)
    data["s"] = pd.Series(rng.choice(["alpha", "beta", "gamma", "delta"], ROWS), dtype="str")
    return pd.DataFrame(data)


async def start_time(repeat: int, sandbox: bool = False) -> float:
    samples = []
    for _ in range(repeat):
        runtime = IPyKernelRuntime(checkpoint_bytes=0, sandbox=sandbox)
        started = time.perf_counter()
        await runtime.start()
        samples.append(time.perf_counter() - started)
        await runtime.stop()
    return statistics.median(samples)


async def round_trip(runtime: IPyKernelRuntime, repeat: int) -> tuple[float, float]:
    for _ in range(20):
        await runtime.execute("1+1")
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        result = await runtime.execute("1+1")
        samples.append(time.perf_counter() - started)
        assert result.output == "2\n", result
    samples.sort()
    return statistics.median(samples) * 1000, samples[int(len(samples) * 0.9)] * 1000


async def stock_round_trip(repeat: int) -> float:
    """The same `1+1` through stock jupyter_client + ipykernel, for scale on this machine."""
    from jupyter_client.manager import AsyncKernelManager

    manager = AsyncKernelManager()
    await manager.start_kernel()
    client = manager.client()
    client.start_channels()
    try:
        await client.wait_for_ready(timeout=60)
        for _ in range(20):
            await client.execute_interactive("1+1", output_hook=lambda msg: None)
        samples = []
        for _ in range(repeat):
            started = time.perf_counter()
            await client.execute_interactive("1+1", output_hook=lambda msg: None)
            samples.append(time.perf_counter() - started)
    finally:
        client.stop_channels()
        await manager.shutdown_kernel(now=True)
    return statistics.median(samples) * 1000


async def inject_new(runtime: IPyKernelRuntime, frame: pd.DataFrame) -> float:
    started = time.perf_counter()
    await runtime.ainject(Variable("df_new", frame))
    return time.perf_counter() - started


async def inject_base64_dill(runtime: IPyKernelRuntime, frame: pd.DataFrame) -> float:
    started = time.perf_counter()
    text = base64.b64encode(dill.dumps(frame)).decode()
    code = f"import base64, dill\ndf_old = dill.loads(base64.b64decode('{text}'))"
    result = await runtime.execute(code)
    elapsed = time.perf_counter() - started
    assert result.success, result.error
    return elapsed


async def retrieve_new(runtime: IPyKernelRuntime, frame: pd.DataFrame) -> float:
    started = time.perf_counter()
    back = await runtime.retrieve("df_new")
    elapsed = time.perf_counter() - started
    assert back.shape == frame.shape
    return elapsed


async def retrieve_base64_dill(runtime: IPyKernelRuntime, frame: pd.DataFrame) -> float:
    """The upstream way back: dill + base64 in the kernel, the text as a user expression."""

    async def fetch() -> str:
        chan = runtime._sup.chan
        content = {
            "code": "import base64, dill\n_b = base64.b64encode(dill.dumps(df_old)).decode()",
            "silent": True,
            "store_history": False,
            "user_expressions": {"b": "_b"},
            "allow_stdin": False,
            "stop_on_error": False,
        }
        msg_id, reply = await chan.send(chan.shell, "execute_request", content)
        msg = await reply
        chan.forget(msg_id)
        return msg["content"]["user_expressions"]["b"]["data"]["text/plain"]

    started = time.perf_counter()
    text = await runtime._call(fetch())
    back = dill.loads(base64.b64decode(text.strip("'")))
    elapsed = time.perf_counter() - started
    assert back.shape == frame.shape
    return elapsed


async def death_detection(runtime: IPyKernelRuntime) -> tuple[float, float]:
    """Kill -9 the kernel mid-cell: time until the runtime knows, and the restart."""
    await runtime.execute("kept = list(range(10))")
    await runtime.names()
    task = asyncio.create_task(runtime.execute("import time\ntime.sleep(60)"))
    await asyncio.sleep(0.5)
    old = runtime._kind.process
    assert old is not None and old.kernel_pid is not None
    killed = time.monotonic()
    os.kill(old.kernel_pid, signal.SIGKILL)
    result = await task
    assert result.error_type == "KernelDied", result
    assert old.exited is not None
    detected = old.exited.result().detected_at - killed
    restarted = time.monotonic() - killed
    assert await runtime.retrieve("kept") == list(range(10))
    return detected, restarted


async def main(quick: bool) -> None:
    load_before = os.getloadavg()
    frame = make_frame()
    runtime = IPyKernelRuntime(checkpoint_bytes=0)
    await runtime.start()
    rt_median, rt_p90 = await round_trip(runtime, 100 if quick else 500)
    stock = await stock_round_trip(100 if quick else 300)
    # Both ways need pandas, pyarrow and dill in the kernel: import them first.
    await runtime.execute("import pandas, pyarrow, dill, base64")
    repeat = 1 if quick else 3
    inj_new = statistics.median([await inject_new(runtime, frame) for _ in range(repeat)])
    # The old way takes minutes per run (IPython parses ~110 MB of source): run it once.
    inj_old = await inject_base64_dill(runtime, frame)
    ret_new = statistics.median([await retrieve_new(runtime, frame) for _ in range(repeat)])
    ret_old = statistics.median([await retrieve_base64_dill(runtime, frame) for _ in range(repeat)])
    runtime.checkpoint_bytes = 512 * 2**20
    started = time.perf_counter()
    await runtime.execute("df_ck = df_new")
    await runtime.names()  # waits for the checkpoint of df_ck
    checkpoint = time.perf_counter() - started
    detected, restarted = await death_detection(runtime)
    await runtime.stop()
    start = await start_time(3 if quick else 5)
    inj_x, ret_x = inj_old / inj_new, ret_old / ret_new
    rows = [
        {"metric": "kernel start (median)", "value": round(start, 3), "unit": "s",
         "target": "<= 1.5", "ok": start <= 1.5},
        {"metric": "execute round trip '1+1' (median)", "value": round(rt_median, 3),
         "unit": "ms", "target": "<= 5", "ok": rt_median <= 5},
        {"metric": "execute round trip '1+1' (p90)", "value": round(rt_p90, 3), "unit": "ms"},
        {"metric": "same, stock jupyter_client + ipykernel (median)", "value": round(stock, 3),
         "unit": "ms"},
        {"metric": "inject 1M x 10 frame, Arrow in buffers", "value": round(inj_new, 3),
         "unit": "s"},
        {"metric": "inject 1M x 10 frame, base64 dill in source", "value": round(inj_old, 3),
         "unit": "s"},
        {"metric": "inject speed-up", "value": round(inj_x, 1), "unit": "x", "target": ">= 5",
         "ok": inj_x >= 5},
        {"metric": "retrieve 1M x 10 frame, Arrow in buffers", "value": round(ret_new, 3),
         "unit": "s"},
        {"metric": "retrieve 1M x 10 frame, base64 dill expression", "value": round(ret_old, 3),
         "unit": "s"},
        {"metric": "retrieve speed-up", "value": round(ret_x, 1), "unit": "x", "target": ">= 5",
         "ok": ret_x >= 5},
        {"metric": "cell + checkpoint of the 1M x 10 frame", "value": round(checkpoint, 3),
         "unit": "s"},
        {"metric": "kernel death (kill -9 mid-cell) detected after", "value": round(detected, 4),
         "unit": "s", "target": "<= 1", "ok": detected <= 1},
        {"metric": "kill -9 to result with state restored", "value": round(restarted, 3),
         "unit": "s"},
        {"metric": "machine load average (1 min) at start", "value": round(load_before[0], 2),
         "unit": ""},
    ]  # fmt: skip
    report(
        "kernel",
        rows,
        {
            "frame": {"rows": ROWS, "columns": COLS,
                      "bytes": int(frame.memory_usage(deep=True).sum())},
            "load_average_before": load_before,
            "load_average_after": os.getloadavg(),
        },
    )  # fmt: skip


async def figures(frame: pd.DataFrame, quick: bool) -> dict[bool, dict[str, float]]:
    """Start, round trip, inject and retrieve of the frame for the plain and the sandboxed
    kernel, measured turn about (both alive) so the load of a shared machine hits both."""
    kernels = {b: IPyKernelRuntime(checkpoint_bytes=0, sandbox=b) for b in (False, True)}
    for runtime in kernels.values():
        await runtime.start()
        await runtime.execute("import pandas, pyarrow")
    samples: dict[bool, dict[str, list[float]]] = {
        b: {"round_trip": [], "inject": [], "retrieve": []} for b in kernels
    }
    for _ in range(3 if quick else 7):
        for boxed, runtime in kernels.items():
            samples[boxed]["round_trip"].append((await round_trip(runtime, 50))[0])
            samples[boxed]["inject"].append(await inject_new(runtime, frame))
            samples[boxed]["retrieve"].append(await retrieve_new(runtime, frame))
    for runtime in kernels.values():
        await runtime.stop()
    out = {boxed: {k: statistics.median(v) for k, v in s.items()} for boxed, s in samples.items()}
    for boxed in (False, True):
        out[boxed]["start"] = await start_time(3 if quick else 5, sandbox=boxed)
    return out


async def sandbox_main(quick: bool) -> None:
    """The sandboxed kernel next to the plain one (target: round trip and inject <= 1.2x)."""
    load_before = os.getloadavg()
    frame = make_frame()
    both = await figures(frame, quick)
    plain, boxed = both[False], both[True]
    rows: list[dict[str, Any]] = []
    names = {
        "start": ("kernel start (median)", "s", 3, None),
        "round_trip": ("execute round trip '1+1' (median)", "ms", 3, 1.2),
        "inject": ("inject 1M x 10 frame, Arrow in buffers", "s", 3, 1.2),
        "retrieve": ("retrieve 1M x 10 frame, Arrow in buffers", "s", 3, None),
    }
    for key, (metric, unit, digits, limit) in names.items():
        ratio = boxed[key] / plain[key]
        rows.append(
            {"metric": f"{metric}, plain", "value": round(plain[key], digits), "unit": unit}
        )
        rows.append(
            {"metric": f"{metric}, --sandbox", "value": round(boxed[key], digits), "unit": unit}
        )
        row: dict[str, Any] = {
            "metric": "  sandboxed / plain",
            "value": round(ratio, 2),
            "unit": "x",
        }
        if limit is not None:
            row.update(target=f"<= {limit}", ok=ratio <= limit)
        rows.append(row)
    rows.append({"metric": "machine load average (1 min) at start",
                 "value": round(load_before[0], 2), "unit": ""})  # fmt: skip
    report(
        "kernel-sandbox",
        rows,
        {"load_average_before": load_before, "load_average_after": os.getloadavg()},
    )


async def inject_parquet_main(quick: bool) -> None:
    """`/inject` of a 1M-row parquet into the kernel (the app's default) and in process, each
    against `pq.read_table(path).to_pandas()`, turn about (target: kernel <= 1.1x)."""
    import tempfile

    import pyarrow.parquet as pq
    from dataio import mixed_frame

    from cave_tui.dataio import inject_file
    from cave_tui.runtime import IPythonRuntime

    load_before = os.getloadavg()
    rows = 200_000 if quick else 1_000_000
    folder = Path(tempfile.mkdtemp())
    path = folder / "sales.parquet"
    mixed_frame(rows).to_parquet(path)
    # The usual case: the kernel runs as the user who owns the file, and reads it itself. A
    # root host runs kernels as nobody: the bench's file is made readable to them for that
    # case, and a private copy measures the other (the host sends the bytes).
    hidden = Path(tempfile.mkdtemp()) / "sales.parquet"
    hidden.write_bytes(path.read_bytes())
    folder.chmod(0o755)
    path.chmod(0o644)
    kernel, local = IPyKernelRuntime(), IPythonRuntime()
    await kernel.execute("import pandas, pyarrow")
    times: dict[str, list[float]] = {
        "kernel": [], "kernel, file unreadable to it": [], "in process": [], "read_table": []
    }  # fmt: skip

    async def inject(runtime: Any, source: Path = path) -> float:
        if "sales" in await runtime.names():
            await runtime.delete("sales")
        started = time.perf_counter()
        injection = await inject_file(runtime, source, "sales")
        took = time.perf_counter() - started
        injection.sha256()  # the background hash, untimed, before the next run
        return took

    def baseline() -> float:
        started = time.perf_counter()
        pq.read_table(path).to_pandas()
        return time.perf_counter() - started

    baseline(), await inject(kernel), await inject(local)  # warm caches and imports
    for i in range(5 if quick else 15):
        order = list(times)
        for which in order[i % len(order) :] + order[: i % len(order)]:
            if which == "read_table":
                times[which].append(baseline())
            elif which == "in process":
                times[which].append(await inject(local))
            else:
                times[which].append(await inject(kernel, path if which == "kernel" else hidden))
    await kernel.stop()
    await local.stop()
    median = {k: statistics.median(v) for k, v in times.items()}
    size = path.stat().st_size / 1e6
    out: list[dict[str, Any]] = [
        {"metric": f"read_table().to_pandas(), {rows:,} rows ({size:.0f} MB)",
         "value": round(median["read_table"], 3), "unit": "s"},
    ]  # fmt: skip
    for which in ("kernel", "kernel, file unreadable to it", "in process"):
        ratio = median[which] / median["read_table"]
        out += [
            {"metric": f"/inject, {which}", "value": round(median[which], 3), "unit": "s"},
            {"metric": "  / read_table", "value": round(ratio, 2), "unit": "x",
             "target": "<= 1.1", "ok": ratio <= 1.1},
        ]  # fmt: skip
    out.append({"metric": "machine load average (1 min) at start",
                "value": round(load_before[0], 2), "unit": ""})  # fmt: skip
    report("kernel-inject", out, {"times": times, "load_average_before": load_before})


async def small_round_trip(runtime: IPyKernelRuntime, repeat: int) -> float:
    """Inject a small value and retrieve it, median in ms."""
    value = {"a": 1, "b": [1.5, "x", None], "c": {"d": True}}
    samples = []
    for _ in range(repeat):
        started = time.perf_counter()
        await runtime.ainject(Variable("small", value))
        back = await runtime.retrieve("small")
        samples.append(time.perf_counter() - started)
        assert back == value
    return statistics.median(samples) * 1000


async def retrieve_records(runtime: IPyKernelRuntime) -> float:
    started = time.perf_counter()
    back = await runtime.retrieve("records")
    elapsed = time.perf_counter() - started
    assert len(back) == 100_000
    return elapsed


def pickle_readers(repeat: int) -> tuple[float, float]:
    """The 100,000 tuples' pickle decoded in this process by the C `SafeUnpickler` (how the
    host read kernel pickles before) and by `bounded_pickle` (how it reads them now), medians."""
    from cave_tui.runtime.kernel.bounded_pickle import bounded_loads
    from cave_tui.runtime.kernel.decode_limits import DecodeBudget
    from cave_tui.runtime.shipped.transport import encode_for_host, safe_loads

    _, _, buffers = encode_for_host([(i, str(i)) for i in range(100_000)])
    times: tuple[list[float], list[float]] = ([], [])
    for _ in range(repeat):
        for reader, out in ((safe_loads, times[0]), (None, times[1])):
            started = time.perf_counter()
            if reader is None:
                bounded_loads(buffers[0], None, DecodeBudget())
            else:
                reader(buffers[0])
            out.append(time.perf_counter() - started)
    return statistics.median(times[0]), statistics.median(times[1])


async def decode_main(quick: bool) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """Round trip, 1M x 10 inject and retrieve, and a 100,000-tuple pickle retrieve, each with
    the decode worker and with decoding in the host, turn about in one kernel (target: round
    trip and frame retrieve with the worker <= 1.2x in the host): the rows and the raw data."""
    load_before = os.getloadavg()
    frame = make_frame()
    runtime = IPyKernelRuntime(checkpoint_bytes=0)
    await runtime.start()
    await runtime.execute("import pandas, pyarrow\nrecords = [(i, str(i)) for i in range(100_000)]")
    await retrieve_records(runtime)  # starts the decode worker: warm from here on
    keys = ("round_trip", "inject", "retrieve", "records")
    samples: dict[bool, dict[str, list[float]]] = {b: {k: [] for k in keys} for b in (True, False)}
    for i in range(3 if quick else 7):
        for worker in (True, False) if i % 2 == 0 else (False, True):
            runtime.decode_in_worker = worker
            samples[worker]["round_trip"].append(await small_round_trip(runtime, 20))
            samples[worker]["inject"].append(await inject_new(runtime, frame))
            samples[worker]["retrieve"].append(await retrieve_new(runtime, frame))
            samples[worker]["records"].append(await retrieve_records(runtime))
    await runtime.stop()
    c_reader, bounded_reader = pickle_readers(3 if quick else 7)
    median = {b: {k: statistics.median(v) for k, v in s.items()} for b, s in samples.items()}
    names = {
        "round_trip": ("inject + retrieve of a small dict (median)", "ms", 1.2),
        "inject": ("inject 1M x 10 frame", "s", 1.2),
        "retrieve": ("retrieve 1M x 10 frame", "s", 1.2),
        "records": ("retrieve 100,000 (int, str) tuples (safe pickle)", "s", None),
    }
    rows: list[dict[str, Any]] = []
    for key, (metric, unit, limit) in names.items():
        inside, worker = median[False][key], median[True][key]
        ratio = worker / inside
        rows += [
            {"metric": f"{metric}, decoded in the host", "value": round(inside, 3), "unit": unit},
            {"metric": f"{metric}, decode worker", "value": round(worker, 3), "unit": unit},
        ]
        row: dict[str, Any] = {"metric": "  worker / host", "value": round(ratio, 2), "unit": "x"}
        if limit is not None:
            row.update(target=f"<= {limit}", ok=ratio <= limit)
        rows.append(row)
    rows += [
        {"metric": "decoding those tuples alone: SafeUnpickler in C (before)",
         "value": round(c_reader, 3), "unit": "s"},
        {"metric": "decoding those tuples alone: the bounded reader (now)",
         "value": round(bounded_reader, 3), "unit": "s"},
        {"metric": "machine load average (1 min) at start",
         "value": round(load_before[0], 2), "unit": ""},
    ]  # fmt: skip
    raw = {"samples": {str(b): s for b, s in samples.items()}, "load_average_before": load_before,
           "load_average_after": os.getloadavg(), "cores": os.cpu_count()}  # fmt: skip
    return rows, raw


def snapshot_rows(names: int = 2000) -> tuple[list[dict[str, Any]], dict[str, float]]:
    """A session snapshot of *names* values (bench/snapshot.py), in the kernel: a step's
    (3 changed; target <= 1 s), the same digesting every value as before, the first one."""
    from snapshot import snapshot_figures

    figures = snapshot_figures(names)
    step = figures["kernel_step_s"]
    rows = [
        {"metric": f"snapshot after a step, {names:,} names, 3 changed (kernel)",
         "value": step, "unit": "s", "target": "<= 1.0", "ok": step <= 1.0},
        {"metric": "  the same, every value digested (before)",
         "value": figures["kernel_step_digest_all_s"], "unit": "s"},
        {"metric": f"first snapshot, all {names:,} names (kernel; in the background)",
         "value": figures["kernel_first_s"], "unit": "s", "target": "<= 1.0",
         "ok": figures["kernel_first_s"] <= 1.0},
    ]  # fmt: skip
    return rows, figures


def decode_and_snapshot(quick: bool) -> None:
    """`--decode`: the decode figures and the 2,000-name snapshot, in one run."""
    rows, raw = asyncio.run(decode_main(quick))
    more, figures = snapshot_rows()
    report("kernel-decode", rows + more, raw | {"snapshot": figures})


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--sandbox", action="store_true", help="sandboxed vs plain kernel")
    parser.add_argument("--inject-parquet", action="store_true", help="/inject of a parquet")
    parser.add_argument("--decode", action="store_true", help="decode worker vs in the host")
    args = parser.parse_args()
    if args.decode:
        decode_and_snapshot(args.quick)
    elif args.inject_parquet:
        asyncio.run(inject_parquet_main(args.quick))
    else:
        asyncio.run(sandbox_main(args.quick) if args.sandbox else main(args.quick))
