"""Bounded decoding with a real kernel: model code forges what the kernel sends back (it owns
the kernel) and the host refuses it without ballooning, through `retrieve` and through a
session snapshot; the caller's event loop keeps running meanwhile. Also: no automagic."""

from __future__ import annotations

import asyncio
import resource

import pytest

from cave_tui.dataio import checkpoint_namespace
from cave_tui.dataio.plan import SkipCause
from cave_tui.runtime.shipped.transport import DecodeLimitExceeded
from cave_tui.security import SecurityChecker

MB = 1024 * 1024

FORGE = """
import _cave_transport
_cave_transport.original = getattr(_cave_transport, "original", _cave_transport.encode_for_host)
_cave_transport.encode_for_host = lambda value, **kw: ({codec!r}, {{}}, [forged])
"""
RESTORE = "import _cave_transport\n_cave_transport.encode_for_host = _cave_transport.original"

BOMB = """
import numpy as np, pyarrow as pa
table = pa.table({"z": pa.array(np.zeros(512 * 2**20 // 8, dtype=np.int64))})
sink = pa.BufferOutputStream()
options = pa.ipc.IpcWriteOptions(compression="zstd")
with pa.ipc.new_stream(sink, table.schema, options=options) as writer:
    writer.write_table(table)
forged = sink.getvalue()
del table
"""


@pytest.fixture
async def forging(kernel):
    """The kernel, with `forge(codec, setup)` to make its encoder send `forged` for any value."""

    async def forge(codec: str, setup: str) -> None:
        for code in (setup, FORGE.format(codec=codec), "x = 1"):
            result = await kernel.execute(code)
            assert result.success, result.error_text

    yield kernel, forge
    await kernel.execute(RESTORE)


def peak_rss() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


async def test_a_compressed_arrow_bomb_from_the_kernel_is_refused(forging):
    kernel, forge = forging
    await forge("arrow.frame", BOMB + "assert len(forged) < 2**20")
    previous, kernel.decode_limit = kernel.decode_limit, 64 * MB
    before = peak_rss()
    try:
        with pytest.raises(DecodeLimitExceeded, match=r"decode limit of 67,108,864.*decode_limit"):
            await kernel.retrieve("x")
    finally:
        kernel.decode_limit = previous
    assert peak_rss() - before < 256 * MB  # the 512 MB were never decompressed


@pytest.mark.parametrize("number", ["fractions\\nFraction", "decimal\\nDecimal"])
async def test_numbers_that_explode_are_refused_by_retrieve_and_by_snapshots(
    forging, number, tmp_path
):
    kernel, forge = forging
    await forge("pickle.safe", f'forged = b"c{number}\\n(V1e8000000\\ntR."')
    with pytest.raises(DecodeLimitExceeded, match="4,300 digits"):
        await kernel.retrieve("x")
    result = await checkpoint_namespace(kernel, tmp_path / "snapshot")
    (skip,) = [s for s in result.skipped if s["name"] == "x"]
    assert skip["cause"] == SkipCause.NOT_RETRIEVED.value and "4,300 digits" in skip["reason"]


async def test_the_event_loop_runs_while_a_slow_decode_is_stopped_at_its_timeout(forging):
    kernel, forge = forging
    # A million pickle globals: over a second of pure-Python decoding in the host.
    await forge("pickle.safe", 'forged = b"(" + b"cbuiltins\\nint\\n(tR" * 1_000_000 + b"l."')
    ticks = 0

    async def ticker() -> None:
        nonlocal ticks
        while True:
            await asyncio.sleep(0.01)
            ticks += 1

    previous, kernel.decode_timeout = kernel.decode_timeout, 0.3
    task = asyncio.create_task(ticker())
    try:
        with pytest.raises(DecodeLimitExceeded, match=r"decode timeout of 0.3 s.*decode_timeout"):
            await kernel.retrieve("x")
    finally:
        task.cancel()
        kernel.decode_timeout = previous
    assert ticks >= 3  # the caller's loop kept running during the decode


async def _exists(kernel, path: str) -> bool:
    result = await kernel.execute(f"import os\nos.path.exists({path!r})")
    assert result.success, result.error_text
    return result.output.strip() == "True"


async def test_automagic_is_off_in_the_kernel(kernel):
    """A one-line `hist -f PATH` would write PATH as `%hist`: in the kernel it is Python."""
    target = "history-written-by-hist.py"  # in the kernel's own directory
    one_line = await kernel.execute(f"hist -f {target}")
    assert not one_line.success and one_line.error_type in ("NameError", "SyntaxError")
    assert not await _exists(kernel, target)
    shell = await kernel.execute("print(get_ipython().automagic, get_ipython().autocall)")
    assert shell.output.split() == ["False", "0"]
    explicit = await kernel.execute(f"%hist -f {target}")  # magics still work when written so
    assert explicit.success, explicit.error_text
    assert await _exists(kernel, target)
    await kernel.execute(f"os.remove({target!r})")
    kernel.security_checker = SecurityChecker.for_policy("standard")
    try:
        checked = await kernel.execute(f"%hist -f {target}")
    finally:
        kernel.security_checker = None
    assert checked.blocked  # and an explicit magic goes through the checker as before
    assert not await _exists(kernel, target)
