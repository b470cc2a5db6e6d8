"""Bounded decoding of kernel bytes in the host, without a kernel: the codecs and the budget.

Compression bombs, frames that pandas would blow up, numbers whose construction explodes,
and the deadline that pure-Python decoding checks."""

from __future__ import annotations

import resource
import struct
import sys
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from cave_tui.runtime.kernel.arrow_sizes import MalformedIPC, decoded_size
from cave_tui.runtime.kernel.decode_limits import DecodeBudget, frame_bytes
from cave_tui.runtime.kernel.host_decode import decode_in_host
from cave_tui.runtime.shipped.transport import (
    DecodeLimitExceeded,
    TransferError,
    encode_for_host,
)

MB = 1024 * 1024


def ipc(table: pa.Table, compression: str | None = None) -> pa.Buffer:
    sink = pa.BufferOutputStream()
    options = pa.ipc.IpcWriteOptions(compression=compression)
    with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
        writer.write_table(table)
    return sink.getvalue()


def zeros(nbytes: int) -> pa.Table:
    return pa.table({"z": pa.array(np.zeros(nbytes // 8, dtype=np.int64))})


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


@pytest.mark.parametrize("compression", [None, "zstd", "lz4"])
def test_decoded_size_is_read_from_headers(compression):
    table = pa.table({"a": np.arange(1000), "s": [str(i) for i in range(1000)]})
    table = table.append_column("d", pa.array(["x", "y"] * 500).dictionary_encode())
    size = decoded_size(ipc(table, compression))
    assert table.nbytes <= size <= table.nbytes + 4096


def test_a_compression_bomb_is_refused_before_it_is_decompressed():
    bomb = ipc(zeros(512 * MB), "zstd")
    assert bomb.size < MB  # small on the wire
    before = peak_rss()
    with pytest.raises(
        DecodeLimitExceeded, match=r"decode limit of 67,108,864 bytes.*decode_limit"
    ):
        decode_in_host("arrow.frame", {}, [bomb], budget=DecodeBudget(64 * MB))
    assert peak_rss() - before < 256 * MB  # the 512 MB were never allocated


def test_bomb_leaves_of_a_container_are_counted_together():
    codec, meta, buffers = encode_for_host({"a": np.arange(3), "b": np.arange(3)})
    leaf = ipc(zeros(40 * MB), "lz4")
    meta["leaves"] = [["arrow.table", {}, 1], ["arrow.table", {}, 1]]
    with pytest.raises(DecodeLimitExceeded):
        decode_in_host(codec, meta, [buffers[0], leaf, leaf], budget=DecodeBudget(64 * MB))


def test_ordinary_and_compressed_values_within_the_limit_come_back():
    frame = pd.DataFrame({"a": range(1000), "s": [f"v{i}" for i in range(1000)]})
    budget = DecodeBudget(64 * MB)
    assert decode_in_host(*encode_for_host(frame), budget=budget).equals(frame)
    small = ipc(zeros(MB), "zstd")
    assert decode_in_host("arrow.table", {}, [small], budget=DecodeBudget(64 * MB)).num_rows > 0
    value = {"f": (Fraction(1, 3), Fraction("2.5e-3")), "d": Decimal("-1.25E+30"), "i": 10**300}
    assert decode_in_host(*encode_for_host(value), budget=budget) == value


def test_the_received_bytes_are_capped_too():
    payload = ipc(zeros(2 * MB))
    with pytest.raises(DecodeLimitExceeded, match="as received"):
        decode_in_host("arrow.table", {}, [payload], budget=DecodeBudget(MB))


def overlapping_list_views(rows: int, width: int) -> pa.Array:
    """*rows* list views, each showing the same *width* values: tiny in Arrow."""
    offsets = pa.array(np.zeros(rows, dtype=np.int32))
    sizes = pa.array(np.full(rows, width, dtype=np.int32))
    return pa.ListViewArray.from_arrays(offsets, sizes, pa.array(np.zeros(width)))


BLOWN_UP = {  # each is under 2 MB as Arrow IPC, and gigabytes in pandas
    "nulls": lambda: pa.nulls(50_000_000),
    "run-end encoded": lambda: pa.RunEndEncodedArray.from_arrays(
        pa.array([50_000_000], pa.int32()), pa.array([1.5])
    ),
    "overlapping list views": lambda: overlapping_list_views(200_000, 10_000),
    "a struct of many null fields": lambda: pa.StructArray.from_arrays(
        [pa.nulls(100_000)] * 500, names=[f"f{i}" for i in range(500)]
    ),
}


@pytest.mark.parametrize("name", list(BLOWN_UP))
def test_a_frame_pandas_would_blow_up_is_refused(name):
    """Tiny in Arrow, one Python object per row (or per shown value) in pandas."""
    table = pa.table({"c": BLOWN_UP[name]()})
    payload = ipc(table)
    assert payload.size < 2 * MB
    with pytest.raises(DecodeLimitExceeded, match="frame pandas would build"):
        decode_in_host("arrow.frame", {}, [payload], budget=DecodeBudget(256 * MB))
    # The Arrow table itself is not expanded: it comes back.
    assert decode_in_host("arrow.table", {}, [payload], budget=DecodeBudget(256 * MB)).num_rows


def test_the_frame_estimate_of_ordinary_columns_is_close():
    frame = pd.DataFrame({"i": np.arange(1000), "f": np.ones(1000), "s": ["abc"] * 1000})
    frame["c"] = pd.Categorical(["x", "y"] * 500)
    table = pa.Table.from_pandas(frame)
    assert 16_000 <= frame_bytes(table) <= 16_000 + 1000 * 70 + 10_000


def test_malformed_streams_are_transfer_errors():
    with pytest.raises(MalformedIPC):
        decoded_size(bytes(ipc(zeros(1024), "zstd"))[:200])
    with pytest.raises(TransferError, match="malformed Arrow stream"):
        decode_in_host(
            "arrow.frame", {}, [b"\xff\xff\xff\xff\x10\0\0\0" + bytes(16)], budget=DecodeBudget()
        )


EXPLOSIVE = {
    "Fraction text": b"cfractions\nFraction\n(V1e8000000\ntR.",
    "Fraction text, a ratio": b"cfractions\nFraction\n(V1/1e8000000\ntR.",
    # LONG4 (a 32,000-bit int), BININT1 3, TUPLE2, REDUCE: Fraction(huge, 3) runs a huge gcd
    "Fraction of huge ints": b"\x80\x02cfractions\nFraction\n\x8b"
    + struct.pack("<i", 4000)
    + b"\x01" * 4000
    + b"K\x03\x86R.",
    "Decimal text": b"cdecimal\nDecimal\n(V1e8000000\ntR.",
    "Decimal, negative exponent": b"cdecimal\nDecimal\n(V1e-8000000\ntR.",
    "int text": b"cbuiltins\nint\n(V" + b"9" * 20000 + b"\ntR.",
}


@pytest.mark.parametrize("name", list(EXPLOSIVE))
def test_numbers_that_explode_are_refused(name):
    with pytest.raises(DecodeLimitExceeded, match="4,300 digits"):
        decode_in_host("pickle.safe", {}, [EXPLOSIVE[name]], budget=DecodeBudget())


def test_json_ints_stay_bounded_whatever_the_interpreter_allows():
    huge = b"[" + b"9" * 20000 + b"]"
    previous = sys.get_int_max_str_digits()
    sys.set_int_max_str_digits(0)  # no limit: JSON would parse a 20,000-digit int
    try:
        with pytest.raises(DecodeLimitExceeded, match="4,300 digits"):
            decode_in_host("json", {}, [huge], budget=DecodeBudget())
        assert decode_in_host("json", {}, [b"[1, 2.5]"], budget=DecodeBudget()) == [1, 2.5]
    finally:
        sys.set_int_max_str_digits(previous)


def test_numbers_from_other_types_are_refused():
    forged = b"cfractions\nFraction\n(cdecimal\nDecimal\n(V1e9\ntRtR."  # Fraction(Decimal)
    with pytest.raises(TransferError, match=r"Fraction\(Decimal\)"):
        decode_in_host("pickle.safe", {}, [forged], budget=DecodeBudget())


def test_pure_python_decoding_stops_at_the_deadline():
    now = [0.0]
    budget = DecodeBudget(timeout=5.0, clock=lambda: now[0])
    budget.tick()
    many = b"(" + b"cbuiltins\nint\n(tR" * 10 + b"l."
    assert decode_in_host("pickle.safe", {}, [many], budget=budget) == [0] * 10
    now[0] = 6.0
    with pytest.raises(DecodeLimitExceeded, match=r"decode timeout of 5.0 s.*decode_timeout"):
        decode_in_host("pickle.safe", {}, [many], budget=budget)
