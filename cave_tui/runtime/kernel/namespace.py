"""Requests about the kernel's namespace: summary, listing, persistable, detail, delete, reset.

A summary runs model-defined `__repr__`s, so it is bounded: a timeout, then an interrupt,
then (code stuck in C, in a kernel cave may kill) a restart; a name whose description hung
is listed by type only until a cell rebinds it. The persistence listing (every name, in one
round trip) pickles small values for their digests: one that hangs is interrupted.
"""

from __future__ import annotations

import contextlib
from collections.abc import Collection, Iterable
from typing import Any

from cave_tui.runtime.base import NamespaceChange, persistable_from_rows
from cave_tui.runtime.kernel.decode_limits import DecodeBudget
from cave_tui.runtime.kernel.errors import KernelDiedError
from cave_tui.runtime.kernel.host_decode import decode_in_host
from cave_tui.runtime.kernel.supervisor import KernelSupervisor
from cave_tui.runtime.shipped.detail import Detail
from cave_tui.runtime.shipped.frame_window import FrameWindow, NotATable, SortKey
from cave_tui.runtime.shipped.persist import Persistable
from cave_tui.runtime.shipped.summary import VarInfo

SUMMARY_LIMIT = 500
SUMMARY_TIMEOUT = 3.0
PERSISTABLE_TIMEOUT = 30.0  # listing every name, pickling the small values for digests


class NamespaceQueries:
    """Reads and edits the kernel's namespace under the supervisor's lock."""

    def __init__(self, sup: KernelSupervisor) -> None:
        self._sup = sup
        self._summary_cache: list[VarInfo] = []
        self._listing_cache: list[VarInfo] = []
        self._undescribable: set[str] = set()  # names whose description hung
        self._safe_summary = False  # after a hang in C: user-defined objects by type only

    def rebound(self, names: Iterable[str]) -> None:
        """A cell bound or deleted *names*: describing them may work again."""
        self._undescribable -= set(names)

    async def summary(
        self, descriptions: dict[str, str], limit: int | None = SUMMARY_LIMIT
    ) -> list[VarInfo]:
        """Rows for at most *limit* names (None: every name); the last rows while a cell runs."""
        sup = self._sup
        cache = self._summary_cache if limit is not None else self._listing_cache
        if sup.cell is not None:
            return list(cache)  # a cell is running: the last summary, at once
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            reply = await self._summary_request(descriptions, limit)
        if reply is None:
            return list(cache)
        stuck = reply["data"].get("stuck")
        if isinstance(stuck, str):
            self._undescribable.add(stuck)
            sup.notices.append(
                f"Describing {stuck!r} for the namespace summary took over "
                f"{SUMMARY_TIMEOUT:g}s (its __repr__ or __len__ hangs?); it is listed by type only."
            )
        rows = []
        for raw in reply["data"].get("rows", [])[:limit]:
            if isinstance(raw, dict):
                with contextlib.suppress(TypeError, ValueError):
                    rows.append(VarInfo.from_dict(raw))
        if limit is None:
            self._listing_cache = rows
        else:
            self._summary_cache = rows
        return rows

    async def _summary_request(
        self, descriptions: dict[str, str], limit: int | None
    ) -> dict[str, Any] | None:
        """The kernel's summary reply, or None (use the cache) when describing hung."""
        sup = self._sup
        chan = sup.chan
        assert chan is not None
        data = {
            "descriptions": descriptions,
            "limit": limit,  # None: every name (the inspector's listing)
            "skip": sorted(self._undescribable),
            "safe": self._safe_summary,
        }
        reply = await sup.bounded_request(
            "summary",
            data,
            what="summarising the namespace",
            timeout=SUMMARY_TIMEOUT,
            hung=(
                "was restarted: describing the namespace hung in native code (an "
                "object's __repr__?); summaries now list user-defined objects by type"
            ),
        )
        if reply is None:
            self._safe_summary = True  # from now on: type names only for user types
        return reply

    async def persistable(
        self, descriptions: dict[str, str], digest_below: int, skip_digest: Collection[str] = ()
    ) -> list[Persistable]:
        """Every user name as a dump keeps it, in one request; a kernel whose agent lacks
        the request (attached, set up by an older cave) is listed through `summary`."""
        sup = self._sup
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            # A value's pickling that hangs is interrupted (the kernel lists the rest bare);
            # one that ignores the interrupt costs a restart, then a listing without digests.
            reply = None
            for below in (digest_below, 0):
                reply = await sup.bounded_request(
                    "persistable",
                    {"digest_below": below, "skip_digest": sorted(skip_digest)},
                    what="listing the namespace to save it",
                    timeout=min(PERSISTABLE_TIMEOUT, sup.checkpoint_timeout()),
                    hung="was restarted: listing the namespace to save it hung in native code",
                )
                if reply is not None:
                    break
        if reply is None:
            raise KernelDiedError("listing the namespace to save it hung twice")
        data = reply["data"]
        if not data.get("ok"):
            return persistable_from_rows(await self.summary(descriptions, limit=None))
        rows = []
        for raw in data.get("rows") or []:
            if isinstance(raw, dict):
                with contextlib.suppress(KeyError, TypeError, ValueError):
                    rows.append(Persistable.from_dict(raw))
        return rows

    async def detail(self, name: str) -> Detail:
        """Computed in the kernel: a 2-million-row frame never crosses to the host."""
        sup = self._sup
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            reply = await sup.request("detail", {"name": name}, what=f"describing {name!r}")
        data = reply["data"]
        if not data.get("ok"):
            raise KeyError(str(data.get("error")))
        return Detail.from_dict(dict(data.get("detail") or {}))

    async def frame_window(
        self, name: str, start: int, stop: int, sort: SortKey | None
    ) -> FrameWindow:
        """Rows of a frame, sliced (and sorted) in the kernel; only they cross, as Arrow IPC,
        decoded within the retrieve limits (`decode_limit`, `decode_timeout`): never a pickle."""
        request = {"name": name, "start": start, "stop": stop, "sort": _sort(sort)}
        reply = await self._table_request("frame_window", request, f"reading rows of {name!r}")
        settings = self._sup.settings
        budget = DecodeBudget(settings.decode_limit, settings.decode_timeout)
        table = decode_in_host("arrow.table", {}, reply["buffers"], budget=budget)
        return FrameWindow.from_meta(dict(reply["data"].get("window") or {}), table)

    async def frame_find(
        self, name: str, text: str, row: int, column: int, sort: SortKey | None
    ) -> tuple[int, int] | None:
        """The next cell holding *text*, searched in the kernel."""
        request = {"name": name, "text": text, "row": row, "column": column, "sort": _sort(sort)}
        reply = await self._table_request("frame_find", request, f"searching {name!r}")
        cell = reply["data"].get("cell")
        return None if cell is None else (int(cell[0]), int(cell[1]))

    async def _table_request(self, op: str, request: dict[str, Any], what: str) -> dict[str, Any]:
        sup = self._sup
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            reply = await sup.request(op, request, what=what)
        data = reply["data"]
        if not data.get("ok"):
            error = str(data.get("error"))
            raise NotATable(error) if data.get("error_type") == "NotATable" else KeyError(error)
        return reply

    async def delete(self, name: str) -> None:
        sup = self._sup
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            reply = await sup.request("delete", {"name": name}, what=f"deleting {name!r}")
        if not reply["data"].get("ok"):
            raise KeyError(str(reply["data"].get("error")))
        sup.injected.pop(name, None)
        sup.store.forget(name)
        sup.on_change(NamespaceChange(deleted=(name,)))

    async def reset(self) -> None:
        """Clear the user's names, then inject the injected items again."""
        sup = self._sup
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            await sup.request("reset", {}, what="resetting")
            sup.store.clear()
            for item in list(sup.injected.values()):
                sup.store.names.append(item.name)
                error = await sup.deliver(item)
                if error is not None:
                    sup.notices.append(error)
        sup.on_change(NamespaceChange(everything=True))


def _sort(sort: SortKey | None) -> list[int | bool] | None:
    return None if sort is None else [sort.column, sort.descending]
