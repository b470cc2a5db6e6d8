"""What injecting an item sends: its checked encoding, and the comm request that binds it.

Shared by the supervisor (which re-injects into each new kernel) and the `exchange`.
"""

from __future__ import annotations

from typing import Any

from cave_tui.runtime.items import (
    Function,
    Injectable,
    ParquetFile,
    Pickled,
    Type,
    Variable,
    validate_name,
)
from cave_tui.runtime.kernel.errors import InjectionError, NotTransferable
from cave_tui.runtime.kernel.transport import TransferError, describe_type, encode_for_kernel

Payload = tuple[str, dict[str, Any], list[Any]]  # (codec, meta, buffers)


def encode_item(item: Injectable) -> Payload:
    """The bytes that copy *item* into the kernel; InjectionError when it cannot travel."""
    if not isinstance(item, Variable | Function | Type):
        raise TypeError(f"inject() takes a Variable, Function or Type, not {type(item).__name__}")
    validate_name(item.name)
    if isinstance(item, Variable) and isinstance(item.value, Pickled):
        return "dill", {}, [item.value.data]  # the kernel unpickles it; the host never does
    if isinstance(item, Variable) and isinstance(item.value, ParquetFile):
        parquet = item.value  # the kernel reads the file itself when it can (else: fallback)
        meta = {"path": parquet.path, "size": parquet.size, "mtime_ns": parquet.mtime_ns}
        return "parquet.file", meta, []
    try:
        return encode_for_kernel(item.value)
    except TransferError as exc:
        raise NotTransferable(
            f"cannot copy {item.name!r} ({describe_type(item.value)}) into the kernel: {exc}. "
            "The kernel runtime injects copies, and this object cannot be serialised "
            "(live handles such as connections, open files, locks and threads cannot). "
            "Options: inject what it needs to be recreated (a path, a URL, parameters) and "
            "a Function that opens it inside the kernel, or use IPythonRuntime, which "
            "shares live objects.",
            name=item.name,
            type_name=describe_type(item.value),
            reason=str(exc),
        ) from None


def fallback_payload(item: Injectable, payload: Payload) -> Payload | None:
    """What to send when the kernel could not take *payload* (a file it cannot see or read):
    the file's bytes, read by the host. None when there is no fallback; InjectionError when
    the file is no longer the one that was checked. Blocking: call it off the event loop."""
    if payload[0] != "parquet.file" or not isinstance(item, Variable):
        return None
    assert isinstance(item.value, ParquetFile)
    try:
        return "parquet", {}, [item.value.read_bytes()]
    except (OSError, ValueError) as exc:
        raise InjectionError(f"cannot inject {item.name!r}: {exc}") from None


def inject_request(item: Injectable, payload: Payload) -> dict[str, Any]:
    """The comm message that binds *item* in the kernel (its buffers travel beside it)."""
    codec, meta, _ = payload
    return {"name": item.name, "codec": codec, "meta": meta}
