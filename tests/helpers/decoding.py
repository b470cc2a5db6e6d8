"""Payloads a kernel can send that cost the host far more than their size, and a probe that
measures the host while one is decoded: its resident memory growth and the longest gap of
an asyncio ticker (the event loop's stall)."""

from __future__ import annotations

import asyncio
import json
import os
import pickle
import struct
import time
from collections.abc import Awaitable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa

MB = 1024 * 1024
RSS_GROWTH = 200 * MB  # generous: the attacks below build 340 MB to over 1 GB
STALL = 1.5  # seconds, on a loaded 2-core machine


def forged_tensor() -> tuple[str, dict[str, Any], list[bytes]]:
    """A 200-byte tensor message whose header claims 140M int64 elements with stride 0."""
    sink = pa.BufferOutputStream()
    pa.ipc.write_tensor(pa.Tensor.from_numpy(np.array([7], dtype=np.int64)), sink)
    message = bytearray(sink.getvalue().to_pybytes())
    one, eight = struct.pack("<q", 1), struct.pack("<q", 8)
    (shape_at,) = [i for i in range(len(message) - 7) if message[i : i + 8] == one]
    stride_at = max(i for i in range(len(message) - 7) if message[i : i + 8] == eight)
    message[shape_at : shape_at + 8] = struct.pack("<q", 140_000_000)
    message[stride_at : stride_at + 8] = struct.pack("<q", 0)
    return "arrow.tensor", {"dtype": "<i8", "shape": [140_000_000]}, [bytes(message)]


def doubling_lists(levels: int = 23) -> bytes:
    """`str()` of lists that each hold the one before twice: a few hundred bytes whose
    text doubles with every level (a C loop no timeout reaches)."""
    nested: list[Any] = []
    for _ in range(levels):
        nested = [nested, nested]
    body = pickle.dumps(nested, protocol=2)[2:-1]  # no PROTO, no STOP
    return b"\x80\x02cbuiltins\nstr\n" + body + b"\x85R."


def empty_sets(count: int = 1_500_000) -> bytes:
    """An ordinary value strict allows: a list of empty sets (3 MB pickled, 340 MB built)."""
    batch = b"(" + b"\x8f\x94" * 1000 + b"e"  # MARK, (EMPTY_SET MEMOIZE) x 1000, APPENDS
    return b"\x80\x05]\x94" + batch * (count // 1000) + b"."  # as pickle writes it, unframed


def empty_lists_json(count: int = 3_000_000) -> bytes:
    """9 MB of JSON that builds a list of 3M empty lists (over 200 MB)."""
    return b"[" + b"[]," * (count - 1) + b"[]]"


def memo_reuse(count: int = 200_000) -> bytes:
    """One 64 KB string referenced 200,000 times (1 MB pickled, 13 GB once expanded)."""
    text = "x" * 65536
    return pickle.dumps([text] * count, protocol=5)


def json_bytes(value: Any) -> bytes:
    return json.dumps(value).encode()


def rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


@dataclass
class Measure:
    """What decoding one payload cost the host."""

    outcome: Any  # the value, or the exception raised
    rss_growth: int
    stall: float


async def measure(work: Awaitable[Any]) -> Measure:
    """Await *work* while a ticker samples the loop's gaps and this process's RSS."""
    before = rss()
    peak, gap = before, 0.0

    async def tick() -> None:
        nonlocal peak, gap
        last = time.monotonic()
        while True:
            await asyncio.sleep(0.005)
            now = time.monotonic()
            gap, last = max(gap, now - last), now
            peak = max(peak, rss())

    ticker = asyncio.create_task(tick())
    await asyncio.sleep(0.02)
    try:
        outcome = await work
    except Exception as exc:
        outcome = exc
    finally:
        ticker.cancel()
    peak = max(peak, rss())
    return Measure(outcome, peak - before, gap)
