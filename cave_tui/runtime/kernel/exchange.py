"""Values crossing between host and kernel: injected copies in, safely decoded values out.

The host encodes (`injection.encode_item`) and decodes (`ValueExchange.decode`, which never
runs kernel code unless `trust_kernel`); the bytes ride in comm message buffers. Each failure
names the value, why, and what to do instead.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from typing import Any

from cave_tui.runtime.base import Retrieved
from cave_tui.runtime.figures import RENDER_LIMIT, FigureError, FigureFormat, check_rendered
from cave_tui.runtime.items import Injectable, Pickled
from cave_tui.runtime.kernel.decode_limits import DecodeBudget
from cave_tui.runtime.kernel.decode_worker import decode_isolated, uses_worker
from cave_tui.runtime.kernel.errors import InjectionError
from cave_tui.runtime.kernel.host_decode import decode_in_host
from cave_tui.runtime.kernel.injection import Payload, inject_request, inject_timeout
from cave_tui.runtime.kernel.supervisor import KernelSupervisor
from cave_tui.runtime.shipped.lazy import NotStreamed, Streamed, StreamError
from cave_tui.runtime.shipped.transport import SAFE_TYPE_NAMES, TransferError


def retrieve_error(
    name: str, type_name: str, detail: str, kind: type[TransferError] = TransferError
) -> TransferError:
    """Why *name* cannot come back from the kernel, and the ways to get it anyway."""
    error = kind(
        f"cannot retrieve {name!r} ({type_name}) from the kernel safely: {detail}. "
        f"Only frames and arrays (Arrow), plain data (JSON) and these types come back: "
        f"{SAFE_TYPE_NAMES}. Options: convert it inside the kernel into one of those "
        "(e.g. a dict of its fields, a DataFrame, a list) and retrieve that; or create the "
        "runtime with trust_kernel=True, which unpickles with dill and so lets code in the "
        "kernel run in this process (unsafe with untrusted code)."
    )
    error.detail = f"a {type_name} does not come back from the kernel safely ({detail})"
    return error


STREAM_TIMEOUT = 24 * 3600.0  # seconds a stream may run when cells have no time limit
KILL_GRACE = 1.0  # seconds past the decode timeout the loop waits for the worker's kill


class KeptInKernel(TransferError):
    """The kernel refuses to send the value (not a failure to decode it here): a dump may
    ask for the kernel's own pickle of it instead (`ValueExchange.pickled`)."""

    pickle_in_kernel = True


@dataclass(frozen=True)
class KernelPickle:
    """A value's dill bytes made in the kernel, for a dump to write as they are, with what
    the kernel said its type is (text: a label, never trusted)."""

    pickled: Pickled
    type_name: str
    module: str


class ValueExchange:
    """Injection and retrieval, run on the I/O loop under the supervisor's lock."""

    def __init__(self, sup: KernelSupervisor) -> None:
        self._sup = sup

    def send_soon(self, item: Injectable, payload: Payload) -> None:
        """`inject()`'s delivery on the I/O loop: sent now, acknowledged by the next request."""
        sup = self._sup
        sup.store.note_injected(item.name)

        async def send() -> None:
            chan = sup.chan
            if chan is None or not sup.chan_ready:
                return  # a (re)start in progress: it injects everything in `injected`
            fut = await chan.comm_request("inject", inject_request(item, payload), payload[2])
            sup.acks.append((item, fut, inject_timeout(payload)))

        task = asyncio.ensure_future(send())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    async def inject(self, item: Injectable, payload: Payload) -> InjectionError | None:
        """Bind *item* in the kernel and wait for it (bounded: `inject_timeout`); None, or
        why it failed."""
        sup = self._sup
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            error = await sup.deliver_checked(item, payload)
            if error is None:
                sup.injected[item.name] = item
                sup.store.note_injected(item.name)
            return error

    async def inject_many(
        self, items: list[Injectable], payloads: list[Payload]
    ) -> list[str | None] | None:
        """Bind *items* in the kernel in one request; per item None or why it failed. None
        from a kernel whose agent lacks the request (attached, set up by an older cave)."""
        sup = self._sup
        requests, buffers = [], []
        for item, payload in zip(items, payloads, strict=True):
            requests.append({**inject_request(item, payload), "nbuf": len(payload[2])})
            buffers.extend(payload[2])
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            reply = await sup.request(
                "inject_many", {"items": requests}, buffers, what=f"injecting {len(items)} values"
            )
            errors = reply["data"].get("errors")
            if not reply["data"].get("ok") or not isinstance(errors, list):
                return None
            if len(errors) != len(items):
                return None
            done = [item for item, error in zip(items, errors, strict=True) if error is None]
            for item in done:
                sup.injected[item.name] = item
            sup.store.note_injected_many([item.name for item in done])
            return [None if e is None else str(e) for e in errors]

    async def _bounded(
        self, op: str, payload: dict[str, Any], what: str, blame: str
    ) -> tuple[dict[str, Any] | None, float]:
        """Send *op* under the lock to a settled kernel, bounded like a checkpoint: the reply
        (None when it hung and the kernel was restarted) and the timeout it had. *blame*
        names the object code that may hang (`__getstate__`, `__reduce__`)."""
        sup = self._sup
        timeout = sup.checkpoint_timeout()
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            reply = await sup.bounded_request(
                op,
                payload,
                what=what,
                timeout=timeout,
                hung=f"was restarted: {what} took over {timeout:g}s and ignored the "
                f"interrupt (a {blame} that hangs?)",
            )
        return reply, timeout

    async def fetch(self, name: str) -> dict[str, Any]:
        """The kernel's encoding of *name* (KeyError if unbound, TransferError if it cannot
        come back safely). Encoding may pickle the value (its own `__getstate__`): bounded
        like a checkpoint, TimeoutError when it hung and the kernel was restarted."""
        settings = self._sup.settings
        reply, timeout = await self._bounded(
            "retrieve",
            {"name": name, "trusted": settings.trust_kernel, "limit": settings.json_limit},
            f"retrieving {name!r}",
            "__getstate__",
        )
        if reply is None:
            raise TimeoutError(f"retrieving {name!r} hung; the kernel was restarted")
        data = reply["data"]
        if not data.get("ok"):
            if data.get("error_type") == "KeyboardInterrupt":
                raise TimeoutError(
                    f"encoding {name!r} took over {timeout:g}s (its __getstate__ hangs?) "
                    "and was stopped"
                )
            if data.get("error_type") == "KeyError":
                raise KeyError(str(data.get("error")))
            type_name, detail = str(data.get("type_name", "?")), str(data.get("error"))
            raise retrieve_error(name, type_name, detail, KeptInKernel)
        return reply

    async def pickled(self, name: str) -> KernelPickle:
        """The dill bytes the kernel makes of *name*, as opaque bytes (never unpickled here):
        at most `decode_limit` of them, bounded like a checkpoint (`bounded_request`).
        KeyError if unbound; TransferError when the kernel cannot pickle it."""
        limit = self._sup.settings.decode_limit
        what = f"pickling {name!r} for a dump"
        reply, _ = await self._bounded("pickle", {"name": name, "limit": limit}, what, "__reduce__")
        if reply is None:
            raise TransferError(f"{what} hung; the kernel was restarted")
        result = _kernel_pickle(reply["data"], reply["buffers"], limit)
        if isinstance(result, Exception):
            raise result
        return result

    async def figure(self, name: str, fmt: FigureFormat) -> bytes:
        """*name*'s Figure drawn as a *fmt* file in the kernel (`op_figure`): only its bytes
        come back, checked (`check_rendered`), never unpickled. KeyError if unbound;
        FigureError when it is no Figure; TransferError when drawing it hung."""
        what = f"drawing {name!r} as {fmt.name}"
        payload = {"name": name, "format": fmt.value, "limit": RENDER_LIMIT}
        reply, _ = await self._bounded("figure", payload, what, "savefig")
        if reply is None:
            raise TransferError(f"{what} hung; the kernel was restarted")
        data = reply["data"]
        if not data.get("ok"):
            if data.get("error_type") == "KeyError":
                raise KeyError(str(data.get("error")))
            raise FigureError(f"cannot write {name!r} as {fmt.name}: {data.get('error')}")
        buffers = reply["buffers"]
        if len(buffers) != 1:
            raise FigureError(f"{what}: the kernel sent no file")
        return check_rendered(bytes(buffers[0]), fmt)

    async def stream_parquet(self, name: str, path: str, overwrite: bool) -> Streamed | None:
        """*name*'s lazy frame streamed to *path* by the kernel (`op_stream_parquet`): no
        row comes here, only the path, rows and bytes; None when it is no lazy frame. It is
        the user's computation: bounded by the cell timeout (interrupted past it)."""
        what = f"streaming {name!r} to {path}"
        timeout = self._sup.settings.cell_timeout or STREAM_TIMEOUT
        payload = {"name": name, "path": path, "overwrite": overwrite}
        sup = self._sup
        async with sup.lock:
            await sup.ensure_kernel()
            await sup.settle()
            reply = await sup.bounded_request(
                "stream_parquet",
                payload,
                what=what,
                timeout=timeout,
                hung=f"was restarted: {what} took over {timeout:g}s and ignored the interrupt",
            )
        if reply is None:
            raise StreamError(f"{what} hung; the kernel was restarted")
        data = reply["data"]
        if data.get("ok"):
            found = data.get("streamed")
            return None if found is None else Streamed.from_dict(found)
        error, kind = str(data.get("error")), data.get("error_type")
        if kind == "KeyError":
            raise KeyError(error)
        if kind == "FileExistsError":
            raise FileExistsError(error)
        if kind == "NotStreamed":
            raise NotStreamed(error)
        if kind == "KeyboardInterrupt":
            raise StreamError(f"{what} took over {timeout:g}s and was stopped")
        raise StreamError(error)

    async def pickled_many(self, names: list[str]) -> list[KernelPickle | Exception] | None:
        """`pickled` of each of *names* in one request (at most `decode_limit` bytes in
        all), each a `KernelPickle` or the error; None when the kernel's agent lacks the
        request or the request hung (then one name at a time)."""
        limit = self._sup.settings.decode_limit
        reply, _ = await self._bounded(
            "pickle_many",
            {"names": names, "limit": limit, "total": limit},
            f"pickling {len(names)} values for a snapshot",
            "__reduce__",
        )
        split = _split_items(reply, len(names))
        if split is None:
            return None
        return [_kernel_pickle(item, own, limit) for item, own in split]

    async def fetch_many(self, names: list[str]) -> list[dict[str, Any]] | None:
        """The kernel's encodings of *names* in one request, each as `fetch` returns it but
        with `ok` False instead of an exception; None from a kernel whose agent lacks the
        request (attached, set up by an older cave) or when it hung (then one at a time)."""
        settings = self._sup.settings
        reply, _ = await self._bounded(
            "retrieve_many",
            {"names": names, "trusted": settings.trust_kernel, "limit": settings.json_limit},
            f"retrieving {len(names)} values",
            "__getstate__",
        )
        split = _split_items(reply, len(names))
        if split is None:
            return None
        return [{"data": item, "buffers": own} for item, own in split]

    def decode_many(self, names: list[str], replies: list[dict[str, Any]]) -> list[Retrieved]:
        """`decode` of each of *replies* (from `fetch_many`), each within its own budget."""
        out = []
        for name, reply in zip(names, replies, strict=True):
            data = reply["data"]
            try:
                if not data.get("ok"):
                    if data.get("error_type") == "KeyError":
                        raise KeyError(str(data.get("error")))
                    type_name, detail = str(data.get("type_name", "?")), str(data.get("error"))
                    raise retrieve_error(name, type_name, detail, KeptInKernel)
                out.append(Retrieved(name, self.decode(name, reply)))
            except (KeyError, TransferError) as exc:
                out.append(Retrieved(name, error=exc))
        return out

    def patience(self) -> float | None:
        """How long the loop waits for one decode: the timeout, and the moment the decode
        worker needs to be killed at it (so the error comes after the kill)."""
        timeout = self._sup.settings.decode_timeout
        return None if timeout is None else timeout + KILL_GRACE

    def budget(self) -> DecodeBudget:
        """The bounds of one retrieve's decoding, from the settings as they are now."""
        settings = self._sup.settings
        return DecodeBudget(settings.decode_limit, settings.decode_timeout)

    async def decode_off_loop(self, name: str, reply: dict[str, Any]) -> Any:
        """`decode` in a thread, given up after `decode_timeout` (the loop stays free; the
        decode worker is killed at the deadline, pure-Python steps stop there themselves)."""
        budget = self.budget()
        work = asyncio.to_thread(self.decode, name, reply, budget)
        try:
            return await asyncio.wait_for(work, self.patience())
        except TimeoutError:
            error = budget.timed_out()
            raise retrieve_error(
                name, str(reply["data"].get("type_name", "?")), str(error), type(error)
            ) from None

    def decode(self, name: str, reply: dict[str, Any], budget: DecodeBudget | None = None) -> Any:
        """The value `fetch` brought back, within *budget* (default: the settings')."""
        data = reply["data"]
        settings = self._sup.settings
        codec, buffers = str(data.get("codec")), reply["buffers"]
        meta = dict(data.get("meta") or {})
        try:
            if settings.decode_in_worker and uses_worker(codec, buffers):
                return decode_isolated(
                    codec, meta, buffers, limit=settings.json_limit, budget=budget or self.budget()
                )
            return decode_in_host(
                codec,
                meta,
                buffers,
                trusted=settings.trust_kernel,
                limit=settings.json_limit,
                budget=budget or self.budget(),
            )
        except TransferError as exc:
            raise retrieve_error(
                name, str(data.get("type_name", "?")), str(exc), type(exc)
            ) from None
        except Exception as exc:  # whatever else the kernel's bytes make a decoder raise
            detail = f"malformed data from the kernel ({type(exc).__name__}: {exc})"
            raise retrieve_error(name, str(data.get("type_name", "?")), detail) from None


def _split_items(
    reply: dict[str, Any] | None, count: int
) -> list[tuple[dict[str, Any], list[Any]]] | None:
    """A batched reply's items, each with its own buffers; None when the reply is missing,
    failed or does not hold *count* items."""
    if reply is None:
        return None
    data, buffers = reply["data"], reply["buffers"]
    items = data.get("items")
    if not data.get("ok") or not isinstance(items, list) or len(items) != count:
        return None
    out, at = [], 0
    for item in items:
        item = item if isinstance(item, dict) else {}
        nbuf = int(item.get("nbuf") or 0)
        out.append((item, buffers[at : at + nbuf]))
        at += nbuf
    return out


def _kernel_pickle(
    data: dict[str, Any], buffers: list[Any], limit: int
) -> KernelPickle | Exception:
    """One `pickle` answer as a `KernelPickle`, or the error to raise or report."""
    if not data.get("ok"):
        if data.get("error_type") == "KeyError":
            return KeyError(str(data.get("error")))
        return TransferError(f"the kernel could not pickle it: {data.get('error')}")
    if len(buffers) != 1 or memoryview(buffers[0]).nbytes > limit:
        return TransferError("the kernel's pickle is malformed or over the limit")
    return KernelPickle(
        Pickled(bytes(buffers[0]), "dill"),
        str(data.get("type_name") or "object")[:200],
        str(data.get("module") or "")[:200],
    )
