"""The codecs on their own (no kernel): what the host accepts from kernel bytes."""

from __future__ import annotations

import io
import json
import pickle
import pickletools

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from cave_tui.runtime.kernel.host_decode import decode_in_host
from cave_tui.runtime.shipped.transport import (
    TransferError,
    UnsafeObjectError,
    decode_in_kernel,
    encode_for_host,
    encode_for_kernel,
    safe_loads,
)


def _global_pickle(module: str, name: str, *args: object) -> bytes:
    """A protocol-2 pickle that calls module.name(*args): what an attacker would send."""
    out = io.BytesIO()
    out.write(b"\x80\x02")
    out.write(f"c{module}\n{name}\n".encode())
    out.write(pickle.dumps(tuple(args), protocol=2)[2:-1])
    out.write(b"R.")
    return out.getvalue()


@pytest.mark.parametrize(
    ("module", "name", "args"),
    [
        ("os", "system", ("touch {marker}",)),
        ("posix", "system", ("touch {marker}",)),
        ("builtins", "eval", ("__import__('os').system('touch {marker}')",)),
        ("builtins", "exec", ("open('{marker}', 'w')",)),
        ("subprocess", "call", (["touch", "{marker}"],)),
        ("builtins", "__import__", ("os",)),
    ],
)
def test_dangerous_globals_are_refused(tmp_path, module, name, args):
    marker = tmp_path / "pwned"
    args = tuple(
        a.format(marker=marker) if isinstance(a, str) else [x.format(marker=marker) for x in a]
        for a in args
    )
    data = _global_pickle(module, name, *args)
    pickletools.dis(data, out=io.StringIO())  # a well-formed pickle, not a parse error
    with pytest.raises(UnsafeObjectError, match=f"{module}.{name}"):
        safe_loads(data)
    assert not marker.exists()


def test_getattr_is_only_for_zoneinfo(tmp_path):
    marker = tmp_path / "pwned"
    # getattr(os, 'system')('touch marker'), spelled with allowed-looking pieces.
    data = (
        b"\x80\x02cbuiltins\ngetattr\n(cos\n_exit\nX\x06\x00\x00\x00systemtR"
        + pickle.dumps((f"touch {marker}",), protocol=2)[2:-1]
        + b"R."
    )
    with pytest.raises(UnsafeObjectError):
        safe_loads(data)
    assert not marker.exists()


def test_amplifying_constructors_are_refused():
    with pytest.raises(UnsafeObjectError):
        safe_loads(_global_pickle("builtins", "bytearray", 10**12))
    with pytest.raises(UnsafeObjectError):
        safe_loads(_global_pickle("builtins", "range", 10**12))


def test_dill_from_the_kernel_needs_trust():
    with pytest.raises(UnsafeObjectError, match="trust_kernel"):
        decode_in_host("dill", {}, [b"whatever"])


def test_json_size_is_capped_both_ways():
    with pytest.raises(TransferError, match="over the 100-byte limit"):
        encode_for_host(["x" * 200], limit=100)
    with pytest.raises(TransferError, match="over the 100-byte limit"):
        decode_in_host("json", {}, [json.dumps(["x" * 200]).encode()], limit=100)


def test_bad_array_payloads_are_refused():
    codec, meta, buffers = encode_for_host(np.arange(6).reshape(2, 3))
    for dtype in ("O", "|O8", "V8", "<U4"):
        with pytest.raises(TransferError, match="refusing array dtype"):
            decode_in_host(codec, {**meta, "dtype": dtype}, buffers)
    with pytest.raises(TransferError, match="does not match its shape"):
        decode_in_host(codec, {**meta, "shape": [5, 5]}, buffers)


@pytest.mark.parametrize(
    "value",
    [
        np.arange(12, dtype=np.int16).reshape(3, 4),
        np.array([[1.5, 2.5]], dtype=">f8"),
        np.array([True, False, True]),
        np.array(["2024-01-01T10:00"], dtype="datetime64[s]"),
        np.array([1, 2], dtype="timedelta64[ms]"),
        np.array([1 + 2j, 3 - 4j], dtype=np.complex64),
        np.array(7.0),
        np.zeros((0, 3)),
    ],
)
def test_arrays_round_trip(value):
    for encode, decode in (
        (encode_for_host, decode_in_host),
        (encode_for_kernel, decode_in_kernel),
    ):
        codec, meta, buffers = encode(value)
        assert codec == "arrow.tensor"
        back = decode(codec, meta, buffers)
        assert back.dtype == value.dtype.newbyteorder("=") and back.shape == value.shape
        np.testing.assert_array_equal(back, value)


def test_frames_and_tables_round_trip():
    frame = pd.DataFrame(
        {"a": [1, 2], "b": ["x", None], "t": pd.to_datetime(["2024-01-01", None])},
        index=pd.MultiIndex.from_tuples([("k", 1), ("k", 2)], names=["g", "n"]),
    )
    codec, meta, buffers = encode_for_host(frame)
    assert codec == "arrow.frame"
    pd.testing.assert_frame_equal(decode_in_host(codec, meta, buffers), frame)
    table = pa.table({"x": [1, 2]})
    assert decode_in_host(*encode_for_host(table)).equals(table)
    batch = table.to_batches()[0]
    assert decode_in_host(*encode_for_host(batch)).equals(batch)


def test_mixed_object_frame_goes_to_the_kernel_by_dill_but_not_back():
    frame = pd.DataFrame({"mixed": [1, "two", 3.0]})
    codec, meta, buffers = encode_for_kernel(frame)
    assert codec == "dill"
    pd.testing.assert_frame_equal(decode_in_kernel(codec, meta, buffers), frame)
    with pytest.raises(TransferError, match="mixes Python object types"):
        encode_for_host(frame)


def test_malformed_arrow_is_an_error_not_a_crash():
    """Offsets that run backwards pass Arrow's cheap checks and make later reads go wrong; the
    host validates every table fully before pandas sees it."""
    offsets = pa.py_buffer(np.array([0, 5, 2], dtype=np.int32).tobytes())
    data = pa.py_buffer(b"abcdef")
    bad = pa.Array.from_buffers(pa.string(), 2, [None, offsets, data])
    sink = pa.BufferOutputStream()
    table = pa.table({"s": bad})
    with pa.ipc.new_stream(sink, table.schema) as writer:
        writer.write_table(table)
    with pytest.raises(pa.ArrowInvalid):
        decode_in_host("arrow.frame", {}, [sink.getvalue()])
    codec, meta, buffers = encode_for_host(pd.DataFrame({"a": range(100)}))
    with pytest.raises(pa.ArrowInvalid):
        decode_in_host(codec, meta, [bytes(buffers[0])[:50]])


def test_kernel_side_precheck_names_the_type():
    class Local:
        pass

    with pytest.raises(TransferError, match="Local"):
        encode_for_host({"inner": Local()})


def test_containers_of_frames_and_arrays_travel_as_arrow_leaves():
    value = {
        "sheet": pd.DataFrame({"a": [1, 2], "b": ["x", "y"]}),
        "arrays": [np.arange(6).reshape(2, 3), np.zeros(3)],
        "note": ("plain", 1.5),
    }
    codec, meta, buffers = encode_for_host(value)
    assert codec == "pickle.arrow" and len(meta["leaves"]) == 3
    back = decode_in_host(codec, meta, buffers)
    pd.testing.assert_frame_equal(back["sheet"], value["sheet"])
    np.testing.assert_array_equal(back["arrays"][0], value["arrays"][0])
    assert back["note"] == ("plain", 1.5)
    kernel_back = decode_in_kernel(codec, meta, buffers)
    pd.testing.assert_frame_equal(kernel_back["sheet"], value["sheet"])


def test_forged_leaf_tables_are_refused():
    codec, meta, buffers = encode_for_host({"a": np.arange(3), "t": (1,)})
    with pytest.raises(TransferError):
        decode_in_host(codec, {"leaves": [["dill", {}, 1]]}, buffers)
    with pytest.raises(TransferError):
        decode_in_host(codec, {"leaves": [["arrow.tensor", meta["leaves"][0][1], 5]]}, buffers)
    with pytest.raises(UnsafeObjectError):
        decode_in_host(codec, {"leaves": []}, buffers)  # an id with no leaf behind it
    # A container holding an unsafe object is still refused, leaves or not.
    with pytest.raises(TransferError):
        encode_for_host({"frame": pd.DataFrame({"a": [1]}), "bad": io.BytesIO()})
