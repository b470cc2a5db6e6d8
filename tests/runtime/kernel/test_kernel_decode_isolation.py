"""What a real kernel sends cannot exhaust or freeze the host, in both kernel modes (plain and
sandboxed): a forged tensor header, an ordinary list of empty sets (300,000 here: the kernel
takes seconds to encode 1.5M; test_decode_isolation feeds those to the decoders), JSON whose
parsing runs past the timeout in C. Host RSS growth and the longest gap of an asyncio ticker
are measured while the value is retrieved; every refusal is a `TransferError` naming the
variable."""

from __future__ import annotations

import asyncio
import inspect
import textwrap
import time
from collections.abc import Iterator

import pytest

from cave_tui.runtime.kernel import IPyKernelRuntime
from cave_tui.runtime.kernel.decode_worker import decode_worker
from cave_tui.runtime.shipped.transport import DecodeLimitExceeded, TransferError
from tests.helpers.decoding import (
    MB,
    RSS_GROWTH,
    STALL,
    doubling_lists,
    empty_lists_json,
    empty_sets,
    measure,
    memo_reuse,
)
from tests.runtime.kernel.conftest import make_runtime
from tests.runtime.kernel.test_kernel_decode_limits import RESTORE
from tests.runtime.kernel.test_sandbox_escapes import sandbox_or_fail

FORGE_TENSOR = """
import struct, numpy as np, pyarrow as pa, _cave_transport
sink = pa.BufferOutputStream()
pa.ipc.write_tensor(pa.Tensor.from_numpy(np.array([7], dtype=np.int64)), sink)
message = bytearray(sink.getvalue().to_pybytes())
one, eight = struct.pack("<q", 1), struct.pack("<q", 8)
(shape_at,) = [i for i in range(len(message) - 7) if message[i : i + 8] == one]
stride_at = max(i for i in range(len(message) - 7) if message[i : i + 8] == eight)
message[shape_at : shape_at + 8] = struct.pack("<q", 140_000_000)
message[stride_at : stride_at + 8] = struct.pack("<q", 0)
forged = bytes(message)
_cave_transport.original = getattr(_cave_transport, "original", _cave_transport.encode_for_host)
_cave_transport.encode_for_host = lambda value, **kw: (
    "arrow.tensor", {"dtype": "<i8", "shape": [140_000_000]}, [forged])
x = 1
"""


@pytest.fixture(scope="module", params=["plain", "sandbox"])
def runtime(request: pytest.FixtureRequest) -> Iterator[IPyKernelRuntime]:
    if request.param == "sandbox":
        sandbox_or_fail()
    kernel = make_runtime(sandbox=request.param == "sandbox", checkpoint_bytes=0)
    asyncio.run(kernel.start())
    yield kernel
    asyncio.run(kernel.stop())


async def run(kernel: IPyKernelRuntime, code: str) -> None:
    result = await kernel.execute(code)
    assert result.success, result.error_text


async def test_a_forged_tensor_header_costs_the_host_nothing(runtime):
    await run(runtime, FORGE_TENSOR)
    try:
        seen = await measure(runtime.retrieve("x"))
    finally:
        await run(runtime, RESTORE)
    assert isinstance(seen.outcome, TransferError), seen.outcome
    assert "'x'" in str(seen.outcome)
    assert seen.rss_growth < RSS_GROWTH, seen.rss_growth
    assert seen.stall < STALL, seen.stall


async def test_an_ordinary_list_of_empty_sets_is_counted_as_built(runtime):
    """What strict allows: 600 KB pickled, 70 MB once built, over a 4 MB decode limit."""
    await run(runtime, "x = [set() for _ in range(300_000)]")
    previous, runtime.decode_limit = runtime.decode_limit, 4 * MB
    try:
        seen = await measure(runtime.retrieve("x"))
    finally:
        runtime.decode_limit = previous
        await run(runtime, "del x")
    assert isinstance(seen.outcome, DecodeLimitExceeded), seen.outcome
    assert "'x'" in str(seen.outcome) and "4,194,304" in str(seen.outcome)
    assert seen.rss_growth < RSS_GROWTH, seen.rss_growth
    assert seen.stall < STALL, seen.stall


async def test_a_decode_that_runs_long_in_c_is_killed_at_the_timeout(runtime):
    """60 MB of JSON numbers: seconds of `json.loads`, a C loop no flag stops (within the
    decode limit, so only the timeout can end it): the worker is killed at 0.3 s, and no
    decoding goes on in the host after the error (its CPU time stays flat)."""
    await run(
        runtime,
        "import _cave_transport\n"
        "forged = b'[' + b'1,' * 30_000_000 + b'1]'\n"
        "_cave_transport.original = getattr(_cave_transport, 'original', "
        "_cave_transport.encode_for_host)\n"
        "_cave_transport.encode_for_host = lambda value, **kw: ('json', {}, [forged])\n"
        "x = 1",
    )
    previous = runtime.decode_timeout, runtime.decode_limit
    runtime.decode_timeout, runtime.decode_limit = 0.3, 4 << 30  # only the time can stop it
    try:
        seen = await measure(runtime.retrieve("x"))
        cpu = time.process_time()
        await asyncio.sleep(2.0)
        cpu_after = time.process_time() - cpu
    finally:
        runtime.decode_timeout, runtime.decode_limit = previous
        await run(runtime, RESTORE)
    assert isinstance(seen.outcome, DecodeLimitExceeded), seen.outcome
    assert "'x'" in str(seen.outcome) and "decode timeout of 0.3 s" in str(seen.outcome)
    assert decode_worker().pid() is None  # the worker was killed, not left decoding
    assert seen.stall < STALL, seen.stall
    assert cpu_after < 0.4, cpu_after  # nothing left decoding here
    assert await runtime.retrieve("x") == 1  # and the next value comes back


PAYLOADS = {
    "doubling lists (pickle)": ("pickle.safe", doubling_lists),
    "one string used 200,000 times (pickle)": ("pickle.safe", memo_reuse),
    "1.5M empty sets (pickle)": ("pickle.safe", empty_sets),
    "3M empty lists (JSON)": ("json", empty_lists_json),
}


@pytest.mark.parametrize("shape", list(PAYLOADS))
async def test_small_payloads_that_build_far_more_are_refused_by_what_they_build(runtime, shape):
    """The payload shapes of the red-team, sent by the kernel itself (a cell replaces its
    encoder): each is a few bytes to 9 MB, far under a 64 MB decode limit as received, and
    builds hundreds of MB to GBs; the host refuses it by what it would build, its RSS and
    loop untouched, the error naming the variable."""
    codec, make = PAYLOADS[shape]
    source = textwrap.dedent(inspect.getsource(make))
    await run(
        runtime,
        f"import pickle, _cave_transport\nfrom typing import Any\n{source}\n"
        f"forged = {make.__name__}()\n"
        "_cave_transport.original = getattr(_cave_transport, 'original', "
        "_cave_transport.encode_for_host)\n"
        f"_cave_transport.encode_for_host = lambda value, **kw: ({codec!r}, {{}}, [forged])\n"
        "x = 1",
    )
    previous, runtime.decode_limit = runtime.decode_limit, 64 * MB
    try:
        seen = await measure(runtime.retrieve("x"))
    finally:
        runtime.decode_limit = previous
        await run(runtime, RESTORE)
    assert isinstance(seen.outcome, TransferError), type(seen.outcome)  # not the value's repr
    assert "'x'" in str(seen.outcome)
    assert seen.rss_growth < RSS_GROWTH, seen.rss_growth
    assert seen.stall < STALL, seen.stall
    assert await runtime.retrieve("x") == 1  # the kernel's own encoder is back
