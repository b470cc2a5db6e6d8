"""Payloads that cost the host far more than their size, fed straight to the host's decoders
(in the host, and through the decode worker): each is refused with a `TransferError` naming
the limit, the host's memory barely grows and its event loop keeps ticking."""

from __future__ import annotations

import asyncio
import os
import pickle
import signal
import time

import numpy as np
import pytest

from cave_tui.runtime.kernel.decode_limits import DecodeBudget
from cave_tui.runtime.kernel.decode_worker import decode_isolated, decode_worker
from cave_tui.runtime.kernel.host_decode import decode_in_host
from cave_tui.runtime.shipped.transport import (
    DecodeLimitExceeded,
    TransferError,
    UnsafeObjectError,
    encode_for_host,
)
from tests.helpers.decoding import (
    MB,
    RSS_GROWTH,
    STALL,
    doubling_lists,
    empty_lists_json,
    empty_sets,
    forged_tensor,
    measure,
    memo_reuse,
)


def in_host(codec: str, data: bytes, limit: int = 64 * MB) -> asyncio.Future[object]:
    budget = DecodeBudget(limit)
    work = asyncio.to_thread(decode_in_host, codec, {}, [data], budget=budget)
    return asyncio.ensure_future(work)


def isolated(codec: str, data: bytes, limit: int = 64 * MB, timeout: float = 60.0):
    budget = DecodeBudget(limit, timeout)
    work = asyncio.to_thread(decode_isolated, codec, {}, [data], limit=64 * MB, budget=budget)
    return asyncio.ensure_future(work)


async def test_a_forged_tensor_header_is_refused_before_any_copy():
    codec, meta, buffers = forged_tensor()
    assert len(buffers[0]) == 200
    work = asyncio.to_thread(decode_in_host, codec, meta, buffers, budget=DecodeBudget())
    seen = await measure(work)
    assert isinstance(seen.outcome, TransferError), seen.outcome
    assert "strides" in str(seen.outcome) or "carries" in str(seen.outcome)
    assert seen.rss_growth < RSS_GROWTH and seen.stall < STALL


def test_a_garbage_tensor_message_is_a_transfer_error():
    with pytest.raises(TransferError, match="malformed array payload"):
        decode_in_host(
            "arrow.tensor", {"dtype": "<i8", "shape": [3]}, [b"x" * 300], budget=DecodeBudget()
        )


def test_ordinary_arrays_still_come_back():
    for array in (np.arange(12.0).reshape(3, 4), np.array([], dtype="<i4"), np.eye(3)[:, ::2]):
        codec, meta, buffers = encode_for_host(array)
        back = decode_in_host(codec, meta, buffers, budget=DecodeBudget())
        assert np.array_equal(back, array) and back.dtype == array.dtype


@pytest.mark.parametrize("where", [in_host, isolated])
async def test_lists_that_double_with_each_level_are_refused(where):
    seen = await measure(where("pickle.safe", doubling_lists()))
    assert isinstance(seen.outcome, (DecodeLimitExceeded, UnsafeObjectError)), seen.outcome
    assert seen.rss_growth < RSS_GROWTH and seen.stall < STALL


@pytest.mark.parametrize("where", [in_host, isolated])
async def test_a_memoised_object_counts_each_time_it_is_used(where):
    seen = await measure(where("pickle.safe", memo_reuse()))
    assert isinstance(seen.outcome, DecodeLimitExceeded), seen.outcome
    assert "the objects the pickle builds" in str(seen.outcome)


@pytest.mark.parametrize("where", [in_host, isolated])
async def test_a_list_of_empty_sets_is_counted_as_built(where):
    """3 MB pickled, 340 MB built: over a 16 MB decode limit, refused as it is built."""
    seen = await measure(where("pickle.safe", empty_sets(), limit=16 * MB))
    assert isinstance(seen.outcome, DecodeLimitExceeded), seen.outcome
    assert "16,777,216" in str(seen.outcome)
    assert seen.rss_growth < RSS_GROWTH
    if where is isolated:  # decoding in a host thread shares the GIL: the loop can stall (2 s)
        assert seen.stall < STALL


@pytest.mark.parametrize("where", [in_host, isolated])
async def test_json_is_counted_by_what_it_builds(where):
    seen = await measure(where("json", empty_lists_json()))
    assert isinstance(seen.outcome, DecodeLimitExceeded), seen.outcome
    assert "the objects the JSON builds" in str(seen.outcome)
    assert seen.rss_growth < RSS_GROWTH and seen.stall < STALL


def test_deep_json_is_refused():
    deep = b"[" * 1000 + b"]" * 1000
    with pytest.raises(DecodeLimitExceeded, match="nested 1,000 deep"):
        decode_in_host("json", {}, [deep], budget=DecodeBudget())


@pytest.mark.parametrize(
    "payload",
    [
        b"\x80\x02cbuiltins\nlist\n]\x85R.",  # list([]) is fine ...
        b"\x80\x02cbuiltins\nstr\nK\x05\x85R.",  # ... str(5) is not
        b"\x80\x02cbuiltins\nset\ncbuiltins\nstr\n\x85R.",  # nor set(<a type>)
    ],
)
def test_builtin_types_are_rebuilt_explicitly(payload):
    if payload.startswith(b"\x80\x02cbuiltins\nlist"):
        assert decode_in_host("pickle.safe", {}, [payload], budget=DecodeBudget()) == []
        return
    with pytest.raises(UnsafeObjectError):
        decode_in_host("pickle.safe", {}, [payload], budget=DecodeBudget())


async def test_a_hung_worker_is_killed_at_the_timeout_and_replaced():
    slow = b"(" + b"cbuiltins\nint\n(tR" * 1_000_000 + b"l."  # seconds of opcodes
    started = time.monotonic()
    seen = await measure(isolated("pickle.safe", slow, limit=1 << 30, timeout=0.3))
    assert isinstance(seen.outcome, DecodeLimitExceeded), seen.outcome
    assert "decode timeout of 0.3 s" in str(seen.outcome)
    assert time.monotonic() - started < 10 and seen.stall < STALL
    assert decode_worker().pid() is None  # killed, not left running
    value = {"numbers": list(range(5000))}
    codec, meta, buffers = encode_for_host(value)
    assert decode_isolated(codec, meta, buffers, limit=64 * MB, budget=DecodeBudget()) == value


def test_the_worker_returns_every_safe_type():
    import collections
    import datetime
    import decimal
    import fractions
    import uuid
    import zoneinfo

    import pandas as pd

    value = {
        "pad": "x" * 5000,  # over the size from which the worker reads it
        "types": [
            uuid.UUID(int=5), collections.deque([1, 2], maxlen=5), collections.Counter("ab"),
            collections.OrderedDict(a=1), collections.defaultdict(list, {"a": [1]}),
            datetime.datetime(2020, 1, 1, tzinfo=zoneinfo.ZoneInfo("Europe/Paris")),
            decimal.Decimal("1.5"), fractions.Fraction(1, 3), pd.Timestamp("2020", tz="UTC"),
            pd.Period("2020-01", "M"), pd.Interval(0, 1), slice(1, 2), complex(1, 2),
            bytearray(b"ab"), frozenset({1}), {1: (2, 3)}, [set(), {1, 2}],
        ],
        "frame": pd.DataFrame({"x": [1, 2]}),
    }  # fmt: skip
    codec, meta, buffers = encode_for_host(value)
    assert codec == "pickle.arrow"
    back = decode_isolated(codec, meta, buffers, limit=64 * MB, budget=DecodeBudget())
    assert back["types"] == value["types"] and back["frame"].equals(value["frame"])
    assert [type(v) for v in back["types"]] == [type(v) for v in value["types"]]
    assert pickle.loads(pickle.dumps(back["types"])) == value["types"]


def test_the_worker_gets_no_secret_from_the_environment(monkeypatch):
    decode_worker().kill()
    monkeypatch.setenv("OPENAI_API_KEY", "sk-never-in-the-worker")
    value = {"rows": [(i, str(i)) for i in range(2000)]}
    codec, meta, buffers = encode_for_host(value)
    assert decode_isolated(codec, meta, buffers, limit=64 * MB, budget=DecodeBudget()) == value
    pid = decode_worker().pid()
    assert pid is not None
    with open(f"/proc/{pid}/environ", "rb") as f:
        environ = f.read()
    assert b"sk-never-in-the-worker" not in environ and b"OPENAI_API_KEY" not in environ
    decode_worker().kill()  # the next test's worker starts from the usual environment


async def test_a_worker_that_dies_mid_decode_is_a_transfer_error():
    """What the host sees when the kernel's bytes kill the worker (its memory limit, a crash)."""
    slow = b"(" + b"cbuiltins\nint\n(tR" * 1_000_000 + b"l."
    work = isolated("pickle.safe", slow, limit=1 << 30)
    for _ in range(200):  # until the worker has the payload
        await asyncio.sleep(0.01)
        pid = decode_worker().pid()
        if pid is not None:
            break
    await asyncio.sleep(0.5)  # reading it (a pure-Python reader: seconds for this one)
    assert pid is not None
    os.kill(pid, signal.SIGKILL)
    with pytest.raises(TransferError, match=r"decode worker (died|could not be started)"):
        await work
    assert decode_worker().pid() is None
