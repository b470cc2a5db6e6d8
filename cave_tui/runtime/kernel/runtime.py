"""`IPyKernelRuntime`: model code in a separate kernel process that can fail safely.

Same contract as `IPythonRuntime`; the code runs in an ipykernel started (or, with
`connection_file=`, attached to) by this runtime, so a segfault, a memory blowup or an
endless loop costs a restart, never the host. This class is the facade: it owns the I/O
thread and hands each call to its parts (`supervisor`, `execution`, `exchange`,
`namespace`, and the `kinds` of kernel), which all run on that thread's event loop.
"""

from __future__ import annotations

import asyncio
import os
import weakref
from collections.abc import Collection, Coroutine, Iterable
from typing import TYPE_CHECKING, Any, Generic, TypeVar, cast, overload

import psutil

from cave_tui.runtime.base import (
    ExecutionResult,
    NamespaceChange,
    OutputListener,
    Retrieved,
    Runtime,
)
from cave_tui.runtime.bindings import raw_binding
from cave_tui.runtime.figures import FigureFormat
from cave_tui.runtime.items import Function, Injectable, Type, Variable
from cave_tui.runtime.kernel import limits
from cave_tui.runtime.kernel.cell import CellOutcome
from cave_tui.runtime.kernel.checkpoint import CheckpointStore
from cave_tui.runtime.kernel.decode_limits import DECODE_LIMIT, DECODE_TIMEOUT
from cave_tui.runtime.kernel.errors import InjectionError
from cave_tui.runtime.kernel.exchange import KernelPickle, ValueExchange
from cave_tui.runtime.kernel.execution import CellExecutor
from cave_tui.runtime.kernel.injection import (
    Payload,
    check_room,
    check_room_many,
    encode_item,
    needs_libraries,
)
from cave_tui.runtime.kernel.ioloop import IOLoop
from cave_tui.runtime.kernel.kinds import AttachedKernel, KernelKind, OwnedKernel
from cave_tui.runtime.kernel.namespace import NamespaceQueries
from cave_tui.runtime.kernel.sandbox import (
    bwrap_argv,
    check_mounts,
    check_workdir,
    describe,
    require_bwrap,
)
from cave_tui.runtime.kernel.settings import DEFAULT_CELL_TIMEOUT, KernelSettings
from cave_tui.runtime.kernel.supervisor import KernelSupervisor
from cave_tui.runtime.memory import MemoryUse, process_rss
from cave_tui.runtime.provenance import Provenance
from cave_tui.runtime.shipped.detail import Detail
from cave_tui.runtime.shipped.frame_window import FrameWindow, SortKey
from cave_tui.runtime.shipped.lazy import Streamed
from cave_tui.runtime.shipped.persist import Persistable
from cave_tui.runtime.shipped.summary import VarInfo
from cave_tui.runtime.shipped.transport import JSON_LIMIT
from cave_tui.runtime.upstream import ErrorFeedbackMode

if TYPE_CHECKING:  # a gateway's module imports jupyter_client: only when one is used
    from cave_tui.runtime.kernel.gateway import GatewayKernel, GatewaySpec

T = TypeVar("T")
DEFAULT_CHECKPOINT_BYTES = 256 * 1024 * 1024


class _Setting(Generic[T]):
    """An attribute of the runtime that lives in its `KernelSettings` (read live by the parts)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    @overload
    def __get__(self, runtime: None, owner: type) -> _Setting[T]: ...
    @overload
    def __get__(self, runtime: IPyKernelRuntime, owner: type) -> T: ...
    def __get__(self, runtime: IPyKernelRuntime | None, owner: type) -> T | _Setting[T]:
        if runtime is None:
            return self
        value: T = getattr(runtime._settings, self.name)
        return value

    def __set__(self, runtime: IPyKernelRuntime, value: T) -> None:
        setattr(runtime._settings, self.name, value)


class IPyKernelRuntime(Runtime):
    """Runs cells in a separate ipykernel process with limits, restarts and checkpoints.

    Values cross as copies (Arrow or dill into the kernel; Arrow, JSON or an
    allow-list pickle back out). See docs/kernel.md for the guarantees.
    """

    unpickles_out_of_process = True  # a `Pickled` value is unpickled inside the kernel
    isolated = True
    memory_limit = _Setting[int | None]()
    cell_timeout = _Setting[float | None]()
    cwd = _Setting[str | None]()
    trust_kernel = _Setting[bool]()
    output_limit = _Setting[int]()
    interrupt_grace = _Setting[float]()
    max_processes = _Setting[int | None]()
    user = _Setting[limits.KernelUser | None]()
    extra_env = _Setting[dict[str, str]]()
    json_limit = _Setting[int]()
    decode_limit = _Setting[int]()
    decode_timeout = _Setting[float | None]()
    decode_in_worker = _Setting[bool]()
    startup_timeout = _Setting[float]()
    switch_interval = _Setting[float | None]()
    allow_net = _Setting[bool]()
    mounts = _Setting[tuple[tuple[str, bool], ...]]()

    def __init__(
        self,
        functions: list[Function] | None = None,
        variables: list[Variable] | None = None,
        types: list[Type] | None = None,
        security_checker: Any = None,
        error_feedback_mode: ErrorFeedbackMode = ErrorFeedbackMode.PLAIN,
        memory_limit: int | str | None = "auto",
        cell_timeout: float | None = DEFAULT_CELL_TIMEOUT,
        cwd: str | os.PathLike[str] | None = None,
        connection_file: str | os.PathLike[str] | None = None,
        trust_kernel: bool = False,
        *,
        output_limit: int = 200_000,
        checkpoint_bytes: int | str = DEFAULT_CHECKPOINT_BYTES,
        interrupt_grace: float = 2.0,
        max_processes: int | None = 512,
        run_as: str | int | None = "auto",
        env: dict[str, str] | None = None,
        json_limit: int = JSON_LIMIT,
        startup_timeout: float = 60.0,
        switch_interval: float | None = 0.0005,
        sandbox: bool = False,
        allow_net: bool = False,
        mounts: Iterable[tuple[str, bool]] = (),
        decode_limit: int = DECODE_LIMIT,
        decode_timeout: float | None = DECODE_TIMEOUT,
        decode_in_worker: bool = True,
        gateway: GatewaySpec | None = None,
        iopub_timeout: float | None = None,
    ) -> None:
        super().__init__(functions, variables, types, security_checker, error_feedback_mode)
        if iopub_timeout is not None:  # upstream 0.8's name for the longest a cell may run
            cell_timeout = iopub_timeout
        self.connection_file = str(connection_file) if connection_file is not None else None
        self._settings = KernelSettings(
            cell_timeout=cell_timeout,
            cwd=str(cwd) if cwd is not None else None,
            trust_kernel=trust_kernel,
            output_limit=output_limit,
            interrupt_grace=interrupt_grace,
            max_processes=max_processes,
            extra_env=dict(env or {}),
            json_limit=json_limit,
            decode_limit=decode_limit,
            decode_timeout=decode_timeout,
            decode_in_worker=decode_in_worker,
            startup_timeout=startup_timeout,
            switch_interval=switch_interval,
            sandbox=sandbox,
            allow_net=allow_net,
            mounts=tuple(mounts),
        )
        if sandbox and self.connection_file is not None:
            raise ValueError("sandbox=True needs a kernel cave starts, not an attached one")
        if gateway is not None and (sandbox or self.connection_file is not None):
            raise ValueError(
                "a gateway's kernel runs on the gateway's machine: no sandbox or connection "
                "file of this host applies to it"
            )
        self.gateway = gateway
        self._gateway_kernel: GatewayKernel | None = None
        if gateway:
            from cave_tui.runtime.kernel.gateway import GatewayKernel

            self._gateway_kernel = GatewayKernel(gateway, startup_timeout)
        self._kind: KernelKind
        if self._gateway_kernel is not None:
            self._kind = self._gateway_kernel
        elif self.connection_file is None:
            self._kind = OwnedKernel(self._settings)
        else:
            self._kind = AttachedKernel(self.connection_file)
        if memory_limit == "auto":
            memory_limit = self._kind.auto_memory_limit()
        self.memory_limit = limits.parse_size(memory_limit)
        self._store = CheckpointStore(limits.parse_size(checkpoint_bytes) or 0)
        self.user = self._kind.resolve_user(run_as, private_folder=cwd is None)
        if sandbox:
            require_bwrap(self.user)  # SandboxUnavailable now, never an unsandboxed kernel
            if self.cwd is not None:
                check_workdir(self.cwd)  # nor a failed start later
            check_mounts(self.mounts)
        limits.kernel_environment({}, self.extra_env, home="/", tmp="/")  # refuse secrets now
        self._sup = KernelSupervisor(
            self._kind, self._settings, self._store, self._injected, self.namespace_changed
        )
        self._namespace = NamespaceQueries(self._sup)
        self._cells = CellExecutor(self._sup, self._namespace)
        self._exchange = ValueExchange(self._sup)
        self._io: IOLoop | None = None
        self._finalizer: weakref.finalize | None = None

    # -- state -----------------------------------------------------------------------------
    @property
    def checkpoint_bytes(self) -> int:
        """Budget for the checkpoint kept in the host (0 turns checkpoints off)."""
        return self._store.budget

    @checkpoint_bytes.setter
    def checkpoint_bytes(self, value: int | str) -> None:
        self._store.budget = limits.parse_size(value) or 0

    @property
    def label(self) -> str:
        if self.gateway is not None:
            return "kernel (gateway)"
        return "kernel (sandbox)" if self.sandbox else "kernel"

    @property
    def gateway_kernel_id(self) -> str | None:
        """The id the gateway gave the running kernel (None: not a gateway's, or down)."""
        return self._gateway_kernel.kernel_id if self._gateway_kernel is not None else None

    @property
    def remote(self) -> str | None:
        """The gateway's URL when the kernel is one a Jupyter gateway started."""
        return self.gateway.url if self.gateway is not None else None

    def memory_use(self) -> MemoryUse | None:
        """The owned kernel's resident memory and its limit (None when attached or down)."""
        pid = self._kind.code_pid
        if pid is None:
            return None
        try:
            return MemoryUse(process_rss(pid), self.memory_limit)
        except (psutil.Error, OSError):
            return None

    def memory_for_data(self, libraries: bool = False) -> MemoryUse | None:
        """The kernel's private writable memory and its limit (what RLIMIT_DATA counts: the
        heap and the buffers data lives in, not reserved address space); with *libraries*,
        plus what pyarrow and pandas will add when the kernel has not loaded them yet."""
        limit = self.memory_limit
        if limit is None:
            return None
        return MemoryUse(limits.data_in_use(self._kind.code_pid, libraries), limit)

    @property
    def kernel_pid(self) -> int | None:
        """The kernel process id (None when attached or not running)."""
        return self._kind.kernel_pid

    @property
    def kernel_info(self) -> dict[str, Any]:
        """The kernel's `kernel_info_reply`, with what the runtime's side reported at start."""
        return self._sup.kernel_info

    @property
    def runtime_dir(self) -> str | None:
        """The owned kernel's private directory (home, tmp, sockets), while it exists."""
        return self._kind.runtime_dir

    @property
    def provenance(self) -> Provenance:
        return Provenance.SANDBOXED_KERNEL if self.sandbox else Provenance.KERNEL

    @property
    def sandbox(self) -> bool:
        """The owned kernel runs under bubblewrap (docs/kernel.md, "Sandbox")."""
        return self._settings.sandbox

    @property
    def sandbox_command(self) -> str | None:
        """The bwrap command line the running kernel was started under (None unsandboxed)."""
        plan = getattr(self._kind, "sandbox", None)
        return describe(bwrap_argv(plan)) if plan is not None else None

    @property
    def private_network(self) -> bool:
        """The running kernel has a network namespace of its own, loopback only: sandboxed
        without `allow_net`, or unsandboxed on a root host that allows it (netns.py)."""
        if self.sandbox:
            return not self._settings.allow_net
        return bool(getattr(self._kind, "private_net", False))

    @property
    def workdir(self) -> str | None:
        """The owned kernel's working directory (None until it starts, and when attached)."""
        return self._kind.workdir

    @property
    def last_outcome(self) -> CellOutcome | None:
        """How the last cell sent to the kernel ended (None before the first, or when the
        last `execute` found no kernel to send it to)."""
        return self._cells.last_outcome

    # -- the I/O thread ----------------------------------------------------------------------
    def _ensure_io(self) -> IOLoop:
        if self._io is None:
            self._io = IOLoop()
            self._finalizer = weakref.finalize(self, _finalize, self._kind, self._io)
        return self._io

    async def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        io = self._ensure_io()
        return await asyncio.wrap_future(io.submit(coro))

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        await self._call(self._sup.start())

    async def stop(self) -> None:
        if self._io is None:
            return
        try:
            await self._call(self._sup.stop())
        finally:
            io, self._io = self._io, None
            if self._finalizer is not None:
                self._finalizer.detach()
            io.stop()
            self._kind.cleanup()

    async def restart(self) -> str:
        """Kill and restart the kernel, then restore the checkpoint; returns the report."""
        return await self._call(self._sup.restart_on_request("was restarted on request"))

    # -- the contract ------------------------------------------------------------------------
    def inject(self, item: Injectable) -> None:
        """Copy *item* into the kernel (now if it is running, else at start).

        The value is serialised here, at call time: later changes on either
        side are not shared. Raises InjectionError when it cannot be copied.
        """
        self._commit(item, self._stage(item))

    def _stage(self, item: Injectable) -> Payload:
        """*item* encoded and checked to fit (InjectionError when it cannot be copied)."""
        payload = encode_item(item)
        check_room(item, payload, self.memory_for_data(needs_libraries(payload)))
        return payload

    def _commit(self, item: Injectable, staged: object) -> None:
        """Send *item*, encoded by `_stage` (now if the kernel runs, else at start)."""
        payload = cast(Payload, staged)
        self._injected[item.name] = item
        io = self._io
        if io is None:
            self._store.note_injected(item.name)  # delivered when the kernel starts
        else:
            io.loop.call_soon_threadsafe(self._exchange.send_soon, item, payload)
        self.namespace_changed(NamespaceChange(changed=(item.name,)))

    async def ainject(self, item: Injectable) -> None:
        """`inject` that waits for the kernel's acknowledgement and raises on failure."""
        payload = await asyncio.get_running_loop().run_in_executor(None, encode_item, item)
        check_room(
            item, payload, self.memory_for_data(needs_libraries(payload))
        )  # before a byte is sent
        error = await self._call(self._exchange.inject(item, payload))
        if error is not None:
            raise error
        self.namespace_changed(NamespaceChange(changed=(item.name,)))

    async def ainject_many(self, items: list[Injectable]) -> list[Exception | None]:
        """`ainject` of each of *items*, many per round trip to the kernel (up to
        INJECT_COUNT values or about INJECT_BYTES of payload a message); per item None or
        the error `ainject` raises for it (a value the kernel refused goes again alone, by
        `ainject`'s own fallbacks)."""
        errors: list[Exception | None] = [None] * len(items)
        loop = asyncio.get_running_loop()
        start = 0
        while start < len(items):
            encoded, start = await loop.run_in_executor(None, _encode_some, items, start)
            for i, payload in encoded:
                if isinstance(payload, InjectionError):
                    errors[i] = payload
            ready = [(i, p) for i, p in encoded if not isinstance(p, InjectionError)]
            refusals = check_room_many(
                [items[i] for i, _ in ready], [p for _, p in ready], self.memory_for_data
            )
            for (i, _), refusal in zip(ready, refusals, strict=True):
                errors[i] = refusal  # before a byte is sent
            ready = [(i, p) for (i, p), refusal in zip(ready, refusals, strict=True) if not refusal]
            if not ready:
                continue
            sent = [items[i] for i, _ in ready]
            answers = await self._call(self._exchange.inject_many(sent, [p for _, p in ready]))
            for (i, _), answer in zip(ready, answers or ["?"] * len(ready), strict=True):
                if answer is None:
                    continue
                try:  # refused in the batch (or an older kernel agent): alone, with fallbacks
                    await self.ainject(items[i])
                except InjectionError as exc:
                    errors[i] = exc
        done = tuple(item.name for item, error in zip(items, errors, strict=True) if error is None)
        if done:
            self.namespace_changed(NamespaceChange(changed=done))
        return errors

    async def execute(
        self,
        code: str,
        timeout: float | None = None,
        *,
        on_output: OutputListener | None = None,
        checked: bool = True,
    ) -> ExecutionResult:
        blocked = self.blocked_result(code, checked=checked)
        if blocked is not None:
            return blocked
        if timeout is None:
            timeout = self.cell_timeout
        self.sent_definitions.record(code)
        width = self.display_width
        result = await self._call(self._cells.execute(code, timeout, on_output, width=width))
        self.result_changed(result)
        return self.shape_error(result)

    async def interrupt(self) -> None:
        await self._call(self._cells.interrupt())

    async def retrieve(self, name: str) -> Any:
        reply = await self._call(self._exchange.fetch(name))
        return await self._exchange.decode_off_loop(name, reply)

    async def render_figure(self, name: str, fmt: FigureFormat) -> bytes:
        """Drawn in the kernel: only the file's bytes come back (no trust_kernel needed)."""
        return await self._call(self._exchange.figure(name, fmt))

    async def stream_parquet(
        self, name: str, path: str, *, overwrite: bool = False
    ) -> Streamed | None:
        """Streamed by the kernel into *path* (as the kernel sees it): no frame byte here."""
        return await self._call(self._exchange.stream_parquet(name, path, overwrite))

    async def retrieve_pickled(self, name: str) -> KernelPickle:
        """*name*'s dill bytes made in the kernel, for a dump to write unread: the way a
        value `retrieve` refuses (an instance of a class a cell wrote) is still saved."""
        return await self._call(self._exchange.pickled(name))

    async def retrieve_pickled_many(self, names: list[str]) -> list[KernelPickle | Exception]:
        """`retrieve_pickled` of each of *names* in one round trip (each its pickle or its
        error); one name at a time from a kernel whose agent lacks the request."""
        got = await self._call(self._exchange.pickled_many(names))
        if got is not None:
            return got
        out: list[KernelPickle | Exception] = []
        for name in names:
            try:
                out.append(await self.retrieve_pickled(name))
            except Exception as exc:
                out.append(exc)
        return out

    async def retrieve_many(self, names: list[str]) -> list[Retrieved]:
        """`retrieve` of each of *names* in one round trip to the kernel, decoded on a worker
        thread; past the decode timeout (or from an older kernel agent) one name at a time."""
        replies = await self._call(self._exchange.fetch_many(names))
        if replies is not None:
            work = asyncio.to_thread(self._exchange.decode_many, names, replies)
            try:
                return await asyncio.wait_for(work, self._exchange.patience())
            except TimeoutError:
                pass
        return await super().retrieve_many(names)

    async def _bind_raw(self, name: str, value: Any) -> None:
        """The raw binding sent and acknowledged before `bind_unique` returns its name."""
        item = raw_binding(name, value)
        await self.ainject(item)
        self._injected[name] = item

    async def namespace_summary(self) -> list[VarInfo]:
        rows = await self._call(self._namespace.summary(self.descriptions()))
        return self.without_unlisted(rows)

    async def namespace_listing(self) -> list[VarInfo]:
        rows = await self._call(self._namespace.summary(self.descriptions(), limit=None))
        return self.without_unlisted(rows)

    async def persistable(
        self, digest_below: int = 0, skip_digest: Collection[str] = ()
    ) -> list[Persistable]:
        """Every user name as a dump keeps it, listed in the kernel in one round trip."""
        rows = await self._call(
            self._namespace.persistable(self.descriptions(), digest_below, skip_digest)
        )
        unlisted = self.unlisted_names()
        return [row for row in rows if row.name not in unlisted]

    async def detail(self, name: str) -> Detail:
        """Computed in the kernel: a 2-million-row frame never crosses to the host."""
        return await self._call(self._namespace.detail(name))

    async def frame_window(
        self, name: str, start: int, stop: int, sort: SortKey | None = None
    ) -> FrameWindow:
        """Sliced in the kernel: only the rows asked for cross to the host, as Arrow."""
        return await self._call(self._namespace.frame_window(name, start, stop, sort))

    async def frame_find(
        self, name: str, text: str, row: int, column: int, sort: SortKey | None = None
    ) -> tuple[int, int] | None:
        return await self._call(self._namespace.frame_find(name, text, row, column, sort))

    async def delete(self, name: str) -> None:
        await self._call(self._namespace.delete(name))

    async def reset(self) -> None:
        await self._call(self._namespace.reset())


INJECT_COUNT = 256  # values per `ainject_many` message
INJECT_BYTES = 8 << 20  # payload bytes after which a message is sent


def _encode_some(
    items: list[Injectable], start: int
) -> tuple[list[tuple[int, Payload | InjectionError]], int]:
    """The payloads of *items* from *start* for one message, and where the next begins."""
    out: list[tuple[int, Payload | InjectionError]] = []
    size = 0
    at = start
    while at < len(items) and len(out) < INJECT_COUNT and size < INJECT_BYTES:
        try:
            payload = encode_item(items[at])
            size += sum(memoryview(b).nbytes for b in payload[2])
            out.append((at, payload))
        except InjectionError as exc:
            out.append((at, exc))
        at += 1
    return out, at


def _finalize(kind: KernelKind, io: IOLoop) -> None:
    """Last resort at garbage collection or exit: kill the kernel, stop the loop, clean up."""
    kind.abandon()
    io.stop()
    kind.cleanup()
