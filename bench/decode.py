"""Bounded decoding of kernel values in the host (no kernel: the codecs and the budget).

Measures: refusing a zstd Arrow bomb (512 MB of zeros) and `Fraction('1e8000000')`, the
peak memory the host gained meanwhile, and what the budget adds to decoding an ordinary
1M x 10 frame (its headers read, its pandas size estimated).

    python bench/decode.py
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

import numpy as np
import pandas as pd
import pyarrow as pa

from bench._common import median_time, report
from cave_tui.runtime.kernel.decode_limits import DecodeBudget
from cave_tui.runtime.shipped.transport import (
    DecodeLimitExceeded,
    decode_in_host,
    encode_for_host,
)

MB = 1024 * 1024


def refuse(codec: str, buffers: list[object]) -> None:
    try:
        decode_in_host(codec, {}, buffers, budget=DecodeBudget(64 * MB))
    except DecodeLimitExceeded:
        return
    raise AssertionError("not refused")


def main() -> None:
    table = pa.table({"z": pa.array(np.zeros(512 * MB // 8, dtype=np.int64))})
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression="zstd")
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    bomb = sink.getvalue()
    del table
    fraction = b"cfractions\nFraction\n(V1e8000000\ntR."
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024
    bomb_s = median_time(lambda: refuse("arrow.frame", [bomb]), 5)
    fraction_s = median_time(lambda: refuse("pickle.safe", [fraction]), 5)
    gained = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024 - before
    frame = pd.DataFrame(np.random.default_rng(0).random((1_000_000, 10)))
    packed = encode_for_host(frame)
    plain = median_time(lambda: decode_in_host(*packed), 5)
    bounded = median_time(lambda: decode_in_host(*packed, budget=DecodeBudget()), 5)
    report(
        "decode",
        [
            {
                "metric": f"zstd bomb ({bomb.size:,} B -> 512 MB) refused",
                "value": bomb_s * 1e3,
                "unit": "ms",
            },
            {"metric": "Fraction('1e8000000') refused", "value": fraction_s * 1e3, "unit": "ms"},
            {"metric": "peak RSS gained while refusing", "value": gained // MB, "unit": "MB"},
            {"metric": "1M x 10 frame, unbounded decode", "value": plain * 1e3, "unit": "ms"},
            {"metric": "1M x 10 frame, with the budget", "value": bounded * 1e3, "unit": "ms"},
        ],
    )


if __name__ == "__main__":
    main()
