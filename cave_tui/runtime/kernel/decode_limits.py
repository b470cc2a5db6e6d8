"""The host's bounds on decoding one value from a kernel: bytes received, bytes materialised,
and time.

`host_decode.decode_in_host` asks a `DecodeBudget` before each step that could grow: the bytes
received, each Arrow stream (its decompressed size, from the message headers, before any
body is read), each frame before pandas builds it, and (from the pickle reader) whether the
time is up. Over a limit it raises `DecodeLimitExceeded`, naming the limit and the setting.
"""

from __future__ import annotations

import itertools
import re
import time
from collections.abc import Callable
from typing import Any

from cave_tui.runtime.kernel.arrow_sizes import MalformedIPC, decoded_size
from cave_tui.runtime.shipped.transport import JSON_LIMIT, DecodeLimitExceeded, TransferError

DECODE_LIMIT = 16 * JSON_LIMIT  # 1 GiB: bytes one retrieved value may take in the host
DECODE_TIMEOUT = 60.0  # seconds one retrieved value may take to decode
OBJECT_BYTES = 64  # what pandas spends on a value it holds as a Python object (about)
_HOW = "raise it with IPyKernelRuntime({name}=...) or runtime.{name} = ..."


def over_limit(what: str, size: int, limit: int) -> DecodeLimitExceeded:
    """The error for *what* (of *size* bytes) over the decode limit."""
    error = DecodeLimitExceeded(
        f"{what} is {size:,} bytes, over the decode limit of {limit:,} bytes "
        f"({_HOW.format(name='decode_limit')})"
    )
    error.detail = f"{what} is over the {limit:,}-byte decode limit"
    return error


def frame_bytes(table: Any) -> int:
    """About what `table.to_pandas()` allocates, from each column's arrays (no row is read,
    except the sizes of list views): see `array_bytes`."""
    return sum(array_bytes(chunk) for column in table.columns for chunk in column.chunks)


def array_bytes(array: Any) -> int:
    """About what pandas makes of one Arrow array: fixed-width values as they are, others as
    one Python object per row (a string, a dict per struct row, an array per list row) plus
    what the children become; a list view counts the values it shows, overlaps included,
    and a run-end-encoded array its logical length."""
    import pyarrow as pa
    import pyarrow.compute as pc

    kind = array.type
    rows = len(array)
    if pa.types.is_dictionary(kind):
        return rows * kind.index_type.bit_width // 8 + array_bytes(array.dictionary)
    if pa.types.is_run_end_encoded(kind):
        values = array.values
        return rows * max(8, array_bytes(values) // max(len(values), 1))
    if isinstance(kind, pa.ExtensionType):
        return array_bytes(array.storage)
    try:
        return rows * max(kind.bit_width // 8, 1)
    except ValueError:  # not fixed-width
        pass
    objects = rows * OBJECT_BYTES
    if pa.types.is_list_view(kind) or pa.types.is_large_list_view(kind):
        values = array.values
        shown = int(pc.sum(pc.list_value_length(array)).as_py() or 0)
        return objects + array_bytes(values) * max(shown, 1) // max(len(values), 1)
    if kind.num_fields and not pa.types.is_union(kind):
        if pa.types.is_struct(kind):
            return objects + sum(array_bytes(array.field(i)) for i in range(kind.num_fields))
        return objects + array_bytes(array.values)  # lists, maps, fixed-size lists
    if pa.types.is_union(kind):
        return objects + sum(array_bytes(array.field(i)) for i in range(kind.num_fields))
    return objects + array.nbytes  # strings, binaries, nulls


JSON_DEPTH = 200  # containers nested in one JSON document from the kernel
_JSON_STRING = re.compile(rb'"[^"\\]*(?:\\.[^"\\]*)*"?')  # linear: never fails once it starts
_JSON_STEP = [1 if c in b"[{" else -1 if c in b"]}" else 0 for c in range(256)]
_NOT_STRUCTURE = bytes(c for c in range(256) if c not in b"[]{}")


def json_cost(data: bytes) -> tuple[int, int]:
    """About the bytes `json.loads(data)` builds, and its deepest nesting, from one linear
    scan of the text: an object per value (and key), a slot per element, and the text itself
    (a string's characters, a number's digits)."""
    from cave_tui.runtime.kernel.bounded_pickle import OBJECT, SLOT

    bare = _JSON_STRING.sub(b'""', data)  # strings emptied: no bracket inside one counts
    opens = bare.count(b"[") + bare.count(b"{")
    values = bare.count(b",") + bare.count(b":") + opens + 1
    built = values * (OBJECT + SLOT) + len(data)  # a number's digits bound its size too
    if opens <= JSON_DEPTH:
        return built, opens
    steps = map(_JSON_STEP.__getitem__, bare.translate(None, _NOT_STRUCTURE))
    return built, max(itertools.accumulate(steps), default=0)


class DecodeBudget:
    """One value's decoding: bytes counted against *limit*, time against *timeout*."""

    def __init__(
        self,
        limit: int = DECODE_LIMIT,
        timeout: float | None = DECODE_TIMEOUT,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.limit = limit
        self.timeout = timeout
        self.clock = clock
        self.deadline = None if timeout is None else clock() + timeout
        self.used = 0

    def _take(self, what: str, size: int) -> None:
        self.used += size
        if self.used > self.limit:
            raise over_limit(what, self.used, self.limit)

    def received(self, buffers: list[Any]) -> None:
        """The bytes as they came (compressed or not)."""
        size = sum(memoryview(b).nbytes for b in buffers)
        if size > self.limit:
            raise over_limit("the payload as received", size, self.limit)

    def arrow_stream(self, buffer: Any) -> None:
        """An Arrow IPC stream, by what reading it will materialise (before reading it)."""
        try:
            size = decoded_size(buffer)
        except MalformedIPC as exc:
            raise TransferError(f"malformed Arrow stream from the kernel: {exc}") from None
        self._take("the Arrow data once decompressed", size)
        self.tick()

    def built(self, what: str, size: int) -> None:
        """*size* more bytes of objects about to be built (pickle and JSON readers, arrays)."""
        self._take(what, size)

    def room(self) -> int:
        """The bytes still allowed."""
        return self.limit - self.used

    def json(self, data: bytes) -> None:
        """A JSON document, by what parsing it will build (before it is parsed)."""
        built, depth = json_cost(data)
        if depth > JSON_DEPTH:
            error = DecodeLimitExceeded(
                f"JSON nested {depth:,} deep, over the limit of {JSON_DEPTH} (fixed)"
            )
            error.detail = f"JSON nested over {JSON_DEPTH} deep"
            raise error
        self._take("the objects the JSON builds", built)
        self.tick()

    def frame(self, table: Any) -> None:
        """The pandas object about to be built from *table*."""
        self._take("the frame pandas would build", frame_bytes(table))
        self.tick()

    def tick(self) -> None:
        """Raise if the time is up (called from loops that can run long)."""
        if self.deadline is not None and self.clock() > self.deadline:
            raise self.timed_out()

    def timed_out(self) -> DecodeLimitExceeded:
        error = DecodeLimitExceeded(
            f"decoding took over the decode timeout of {self.timeout} s "
            f"({_HOW.format(name='decode_timeout')})"
        )
        error.detail = f"decoding took over the {self.timeout} s decode timeout"
        return error
