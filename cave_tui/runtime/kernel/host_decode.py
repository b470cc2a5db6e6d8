"""Decoding, in the host, what a kernel sent (`transport.encode_for_host` on its side):
never kernel-chosen code unless trusted, and within a `DecodeBudget` counted by what is built
(`bounded_pickle` for pickles, `DecodeBudget.json` for JSON, `transport.decode_arrow` for Arrow).
Host only: the kernel's copy of `transport` never imports this."""

from __future__ import annotations

import json
from typing import Any

from cave_tui.runtime.kernel.bounded_pickle import bounded_loads
from cave_tui.runtime.kernel.decode_limits import DecodeBudget
from cave_tui.runtime.shipped.transport import (
    ARROW_CODECS,
    JSON_LIMIT,
    DecodeLimitExceeded,
    TransferError,
    UnsafeObjectError,
    decode_arrow,
    decode_leaves,
    json_int,
)


def decode_in_host(
    codec: str,
    meta: dict[str, Any],
    buffers: list[Any],
    *,
    trusted: bool = False,
    limit: int = JSON_LIMIT,
    budget: Any = None,
) -> Any:
    """Host side: never runs kernel-chosen code unless *trusted*; a *budget*
    (`decode_limits.DecodeBudget`) bounds the bytes received and materialised, and the time."""
    if budget is not None:
        budget.received(buffers)
    if codec in ARROW_CODECS:
        return decode_arrow(codec, meta, buffers, budget=budget)
    if not buffers:
        raise TransferError("missing payload")
    size = memoryview(buffers[0]).nbytes
    if codec == "json":
        if size > limit:
            raise TransferError(f"{size:,} bytes of JSON, over the {limit:,}-byte limit")
        data = bytes(buffers[0])
        _host_budget(budget).json(data)  # what it builds, before it is built
        try:
            return json.loads(data, parse_int=json_int())
        except (ValueError, RecursionError) as exc:
            raise TransferError(f"malformed JSON from the kernel: {exc}") from None
    if codec in ("pickle.safe", "pickle.arrow"):
        if size > limit:
            raise TransferError(f"{size:,} bytes pickled, over the {limit:,}-byte limit")
        budget = _host_budget(budget)
        leaves = (
            decode_leaves(meta, buffers, validate=True, budget=budget)
            if codec == "pickle.arrow"
            else None
        )
        try:
            return bounded_loads(buffers[0], leaves, budget)
        except (UnsafeObjectError, DecodeLimitExceeded):
            raise
        except Exception as exc:
            raise TransferError(f"malformed pickle from the kernel: {exc}") from None
    if codec == "dill":
        if not trusted:
            raise UnsafeObjectError("the kernel sent dill bytes but trust_kernel is off")
        import dill

        return dill.loads(bytes(buffers[0]))
    raise TransferError(f"unknown codec {codec!r}")


def _host_budget(budget: Any) -> Any:
    """*budget*, or the default `DecodeBudget` (host only: the kernel never decodes so)."""
    return budget if budget is not None else DecodeBudget()
