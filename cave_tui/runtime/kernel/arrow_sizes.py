"""What an Arrow IPC stream will occupy once read, known before any body is decompressed.

pyarrow reads the messages (`pa.ipc.MessageReader`) but has no way to cap what a compressed
record batch decompresses to (no size option, no capped memory pool in Python), so this
module reads the few fields that say so from each message's flatbuffer header (Arrow's
`Message.fbs`): the batch's buffers and whether the body is compressed; a compressed buffer
starts with its uncompressed length (int64), which is summed. Nothing here allocates more
than the message headers.
"""

from __future__ import annotations

import struct
from collections.abc import Iterator
from typing import Any

# Message.fbs field ids: Message{version, header_type, header, bodyLength, custom_metadata};
# RecordBatch{length, nodes, buffers, compression, variadicBufferCounts};
# DictionaryBatch{id, data, isDelta}; header_type: DictionaryBatch = 2, RecordBatch = 3.
_HEADER_TYPE, _HEADER = 1, 2
_BATCH_BUFFERS, _BATCH_COMPRESSION = 2, 3
_DICTIONARY_DATA = 1
_DICTIONARY_BATCH, _RECORD_BATCH = 2, 3
_BUFFER = struct.Struct("<qq")  # Buffer{offset: long, length: long}
_PREFIX = struct.Struct("<q")  # a compressed buffer's uncompressed length (-1: stored raw)


class MalformedIPC(ValueError):
    """The header does not describe a readable Arrow message."""


class _Table:
    """One flatbuffer table: fields by id, read with bounds checks."""

    def __init__(self, data: memoryview, pos: int) -> None:
        self.data = data
        self.pos = pos
        vtable = pos - self._unpack("<i", pos)
        self.vtable = vtable
        self.vtable_size = self._unpack("<H", vtable)

    def _unpack(self, fmt: str, pos: int) -> int:
        if not 0 <= pos <= len(self.data) - struct.calcsize(fmt):
            raise MalformedIPC("an offset outside the message header")
        value: int = struct.unpack_from(fmt, self.data, pos)[0]
        return value

    def _field(self, index: int) -> int | None:
        slot = 4 + 2 * index
        if slot + 2 > self.vtable_size:
            return None
        offset = self._unpack("<H", self.vtable + slot)
        return self.pos + offset if offset else None

    def byte(self, index: int) -> int:
        pos = self._field(index)
        return 0 if pos is None else self._unpack("<B", pos)

    def table(self, index: int) -> _Table | None:
        pos = self._field(index)
        return None if pos is None else _Table(self.data, pos + self._unpack("<I", pos))

    def structs(self, index: int, size: int) -> tuple[int, int]:
        """(start, count) of a vector of fixed-size structs; (0, 0) when absent."""
        pos = self._field(index)
        if pos is None:
            return 0, 0
        start = pos + self._unpack("<I", pos)
        count = self._unpack("<I", start)
        if start + 4 + count * size > len(self.data):
            raise MalformedIPC("a vector longer than the message header")
        return start + 4, count


def _batch(header: _Table, kind: int) -> _Table | None:
    if kind == _RECORD_BATCH:
        return header
    if kind == _DICTIONARY_BATCH:
        return header.table(_DICTIONARY_DATA)
    return None


def _decoded_body(batch: _Table, body: memoryview) -> int:
    """Bytes a record batch's buffers hold once read (decompressed when compressed)."""
    if batch.table(_BATCH_COMPRESSION) is None:
        return len(body)  # read in place: no more than the body itself
    start, count = batch.structs(_BATCH_BUFFERS, _BUFFER.size)
    total = 0
    for i in range(count):
        offset, length = _BUFFER.unpack_from(batch.data, start + i * _BUFFER.size)
        if length == 0:
            continue
        if offset < 0 or length < _PREFIX.size or offset + length > len(body):
            raise MalformedIPC("a buffer outside the message body")
        (raw,) = _PREFIX.unpack_from(body, offset)
        if raw < -1:
            raise MalformedIPC("a negative uncompressed length")
        total += length - _PREFIX.size if raw == -1 else raw
    return total


def _messages(buffer: Any) -> Iterator[Any]:
    import pyarrow as pa

    reader = pa.ipc.MessageReader.open_stream(pa.BufferReader(pa.py_buffer(buffer)))
    while True:
        try:
            yield reader.read_next_message()
        except StopIteration:
            return


def decoded_size(buffer: Any) -> int:
    """Bytes reading the IPC stream in *buffer* materialises (MalformedIPC if unreadable)."""
    import pyarrow as pa

    total = 0
    try:
        for message in _messages(buffer):
            header = memoryview(message.metadata)
            root = _Table(header, _unpack_root(header))
            header_table = root.table(_HEADER)
            kind = root.byte(_HEADER_TYPE)
            batch = None if header_table is None else _batch(header_table, kind)
            if batch is not None and message.body is not None:
                total += _decoded_body(batch, memoryview(message.body))
            elif message.body is not None:
                total += message.body.size
    except (pa.ArrowException, OSError, struct.error) as exc:
        raise MalformedIPC(str(exc)) from None
    return total


def _unpack_root(header: memoryview) -> int:
    if len(header) < 4:
        raise MalformedIPC("a message header too short to read")
    root: int = struct.unpack_from("<I", header, 0)[0]
    return root
