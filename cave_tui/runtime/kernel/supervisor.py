"""Keeps one live kernel behind the runtime: boots it, watches for its death, restarts it,
and checkpoints the user's variables so that a restart brings them back.

Every method runs on the runtime's I/O loop. What differs between a kernel cave launched
and one it attached to is asked of the `KernelKind`.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
import secrets
import time
from collections.abc import Awaitable, Callable
from typing import TYPE_CHECKING, Any, TypeVar

from cave_tui.runtime.base import NamespaceChange
from cave_tui.runtime.items import Injectable
from cave_tui.runtime.kernel.checkpoint import CheckpointStore, loss_report
from cave_tui.runtime.kernel.errors import (
    InjectionError,
    KernelDiedError,
    KernelLaunchError,
    KernelOutOfMemory,
)
from cave_tui.runtime.kernel.injection import (
    OUT_OF_MEMORY,
    Payload,
    encode_item,
    fallback_payload,
    inject_request,
    inject_timeout,
)
from cave_tui.runtime.kernel.install import bootstrap_cell, bootstrap_sources, host_paths
from cave_tui.runtime.kernel.kinds import KernelKind
from cave_tui.runtime.kernel.process import KernelExit
from cave_tui.runtime.kernel.settings import KernelSettings
from cave_tui.runtime.tasks import abandon

if TYPE_CHECKING:
    import zmq.asyncio

    from cave_tui.runtime.kernel.cell import CellRun
    from cave_tui.runtime.kernel.channel import MessageRouter

T = TypeVar("T")
ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")


class KernelSupervisor:
    """One kernel's life as the runtime sees it, and the state every request shares."""

    def __init__(
        self,
        kind: KernelKind,
        settings: KernelSettings,
        store: CheckpointStore,
        injected: dict[str, Injectable],
        on_change: Callable[[NamespaceChange], None],
    ) -> None:
        self.kind = kind
        self.settings = settings
        self.store = store
        self.injected = injected  # the runtime's own dict: re-injected into each new kernel
        self.on_change = on_change
        self.kernel_info: dict[str, Any] = {}
        self.kernel_session: str | None = None  # the session id the kernel signs with
        self.ctx: zmq.asyncio.Context | None = None
        self.chan: MessageRouter | None = None
        self.chan_ready = False  # installed: an inject may be sent on the channel
        self.cell: CellRun | None = None  # the running cell (its code deals with a death)
        self.notices: list[str] = []  # for the model, with the next result
        # injections in flight, with the seconds their acknowledgement may take
        self.acks: list[tuple[Injectable, asyncio.Future[Any], float]] = []
        self.ckpt_task: asyncio.Future[Any] | None = None
        self.started = False
        self.stopping = False
        self.boots = 0
        # where a kind that keeps the checkpoint on the kernel's machine keeps it (its key)
        self.checkpoint_key = secrets.token_hex(16) if kind.keeps_checkpoint else None
        self._lock: asyncio.Lock | None = None
        self._recovery: asyncio.Future[Any] | None = None

    @property
    def lock(self) -> asyncio.Lock:
        """Held by every request, so one runs at a time (made on first use, on the I/O loop)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock

    def take_notices(self) -> str | None:
        notices, self.notices = self.notices, []
        return "\n".join(notices) if notices else None

    # -- death -------------------------------------------------------------------------------
    def died(self) -> asyncio.Future[KernelExit]:
        return self.kind.died()

    async def race(self, fut: Awaitable[T], what: str, timeout: float | None = None) -> T:
        """Await *fut* unless the kernel dies first (then KernelDiedError, at once)."""
        died = self.died()
        task = asyncio.ensure_future(fut)
        waiting: list[asyncio.Future[Any]] = [task, died]
        try:
            done, _ = await asyncio.wait(
                waiting, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
            )
        except asyncio.CancelledError:
            task.cancel()
            raise
        if task in done:
            try:
                return task.result()
            except ConnectionError as exc:  # the channel was failed: the kernel is gone
                raise KernelDiedError(f"{exc} during {what}") from None
        task.cancel()
        if died in done:
            info = died.result()
            raise KernelDiedError(f"the kernel {info.describe()} during {what}")
        raise TimeoutError(f"the kernel did not answer {what} in {timeout:g}s")

    def on_exit(self, info: KernelExit) -> None:
        """A launched kernel is gone (called on the I/O loop by its process)."""
        from cave_tui.runtime.kernel.channel import ChannelClosed

        if self.chan is not None:
            self.chan.fail_all(ChannelClosed(f"the kernel {info.describe()}"))
        if info.requested or self.stopping or self.cell is not None:
            return  # whoever killed it, or the running cell, deals with it
        if self._recovery is None or self._recovery.done():
            self._recovery = asyncio.ensure_future(self._recover(info))

    async def _recover(self, info: KernelExit) -> None:
        async with self.lock:
            if self.stopping or self.kind.has_live_process:
                return
            reason = info.describe() + " while idle"
            try:
                self.notices.append(await self.restart(reason))
            except Exception as exc:
                self.notices.append(f"The kernel {reason} and could not be restarted: {exc}")

    # -- lifecycle ---------------------------------------------------------------------------
    async def start(self) -> None:
        async with self.lock:
            if self.started and self.chan is not None:
                return
            self.stopping = False
            await self.boot(restore=False)
            self.started = True

    async def ensure_kernel(self) -> None:
        """Make sure a live kernel is there (starting, restarting or re-attaching as needed)."""
        if not self.started:
            self.stopping = False
            await self.boot(restore=False)
            self.started = True
            return
        await self.kind.revive(self)

    async def stop(self) -> None:
        if self.checkpoint_key is not None and self.chan is not None and self.chan_ready:
            with contextlib.suppress(Exception):  # the checkpoint kept on its machine
                await self.request(
                    "drop_checkpoint", {"keep": self.checkpoint_key}, what="stopping", timeout=5
                )
        self.stopping = True
        self.close_channel()
        await self.kind.stop()
        if self.ctx is not None:
            self.ctx.destroy(linger=0)
            self.ctx = None
        self.started = False
        self._lock = None
        self.store.clear()
        self.forget_pending()

    def close_channel(self) -> None:
        self.chan_ready = False
        if self.chan is not None:
            self.chan.close()
            self.chan = None

    def forget_pending(self) -> None:
        """Drop the work queued for the old kernel (acknowledgements, the checkpoint)."""
        self.acks.clear()
        self.ckpt_task = None

    async def restart(self, reason: str) -> str:
        """A fresh kernel with the state restored (the kind's way); returns the report."""
        return await self.kind.restart(self, reason)

    async def restart_on_request(self, reason: str) -> str:
        async with self.lock:
            if self.kind.has_live_process:
                await self.settle()  # the last cell's checkpoint first
            notice = await self.restart(reason)
            self.notices.append(notice)
            return notice

    async def reboot(self, reason: str, started: float) -> str:
        """Boot a new kernel and bring the state back; the report for the model."""
        reinjected, restored, failed = await self.boot(restore=True)
        report = loss_report(
            reason,
            self.store,
            restored=restored,
            reinjected=reinjected,
            failed=failed,
            elapsed=time.monotonic() - started,
        )
        self.store.stale.clear()  # the kernel now holds the checkpoint's values
        return report

    # -- boot --------------------------------------------------------------------------------
    async def boot(self, *, restore: bool) -> tuple[list[str], list[str], dict[str, str]]:
        """Start (or attach to) a kernel and install the runtime's side in it; then the
        injected items and (with *restore*) the checkpoint go back in. Returns the names
        re-injected, the names restored, and why the others failed."""
        import zmq.asyncio

        if self.ctx is None:
            self.ctx = zmq.asyncio.Context()
        self.boots += 1
        # What `_install` sends is read (and checked), and the channel's module (jupyter_client)
        # imported, on a thread while the kernel starts, not once it is up (the first boot's;
        # later ones find both done).
        reading = asyncio.ensure_future(asyncio.to_thread(_before_install))
        try:
            info = await self.kind.start(self)
        except BaseException:
            abandon(reading)
            raise
        chan = self.kind.open_channel(info, self.ctx)
        self.chan = chan
        try:
            await self._wait_ready(chan)
            await reading
            await self._install(chan)
        except BaseException:
            abandon(reading)
            self.close_channel()
            await self.kind.abort()
            raise
        self.chan_ready = True
        self.kind.watch(self)
        names = self.store.names
        first = not names and not self.store.entries
        items = [i for n, i in list(self.injected.items()) if first or not restore or n in names]
        reinjected: list[str] = []
        for item in items:
            error = await self.deliver(item)
            if error is None:
                reinjected.append(item.name)
            else:
                self.notices.append(error)
        restored: list[str] = []
        failed: dict[str, str] = {}
        if restore and self.store.entries:
            data, buffers = self.store.restore_request()
            if self.checkpoint_key is not None:
                data["keep"] = self.checkpoint_key
            reply = await self.request("restore", data, buffers, what="restoring the checkpoint")
            restored = list(reply["data"].get("restored", []))
            failed = dict(reply["data"].get("failed", {}))
            for name in failed:
                self.store.entries.pop(name, None)
        return reinjected, restored, failed

    async def _wait_ready(self, chan: MessageRouter) -> None:
        """kernel_info until the shell answers and IOPub delivers (no lost output)."""
        timeout = self.settings.startup_timeout
        deadline = time.monotonic() + timeout
        pending: list[str] = []
        died = self.died()
        try:
            while True:
                msg_id, reply = await chan.send(chan.shell, "kernel_info_request", {})
                pending.append(msg_id)
                assert reply is not None
                waiting: list[asyncio.Future[Any]] = [reply, died]
                done, _ = await asyncio.wait(waiting, timeout=0.25)
                if died in done:
                    info = died.result()
                    raise KernelLaunchError(
                        f"the kernel {info.describe()} while starting:\n{info.log.strip()[-3000:]}"
                    )
                if reply in done:
                    self.kernel_info = reply.result()["content"]
                    self.kernel_session = reply.result()["header"].get("session")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(chan.iopub_seen.wait(), 1.0)
                    if chan.iopub_seen.is_set():
                        return
                if time.monotonic() > deadline:
                    raise KernelLaunchError(f"the kernel did not start within {timeout:g}s")
        finally:
            for msg_id in pending:
                chan.forget(msg_id)

    async def _install(self, chan: MessageRouter) -> None:
        config = {
            "output_limit": self.settings.output_limit,
            "switch_interval": self.settings.switch_interval,
            "extra_paths": host_paths(),
            "own_kernel": self.kind.owned,
        }
        msg_id, reply = await chan.send(
            chan.shell,
            "execute_request",
            {
                "code": bootstrap_cell(config, compiled=self.kind.runs_this_python),
                "silent": True,
                "store_history": False,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": False,
            },
        )
        assert reply is not None
        content = (await self.race(reply, "start-up", 30))["content"]
        chan.forget(msg_id)
        if content.get("status") != "ok":
            trace = ANSI.sub("", "\n".join(content.get("traceback", [])))
            raise KernelLaunchError(f"the runtime could not install itself in the kernel:\n{trace}")
        await chan.comm_open()
        hello = await self.request("hello", {}, what="start-up")
        self.kernel_info.update(hello["data"])

    # -- requests ----------------------------------------------------------------------------
    async def request(
        self,
        op: str,
        data: dict[str, Any],
        buffers: list[Any] | None = None,
        *,
        what: str,
        timeout: float | None = None,
    ) -> dict[str, Any]:
        """One request on the `cave` comm: the reply's data and buffers (TimeoutError when
        the kernel does not answer within *timeout* seconds)."""
        chan = self.chan
        if chan is None:
            raise KernelDiedError(f"no kernel is running for {what}")
        fut = await chan.comm_request(op, data, buffers)
        msg = await self.race(fut, what, timeout)
        reply = msg["content"]["data"]
        return {"data": reply, "buffers": msg.get("buffers") or []}

    async def bounded_request(
        self, op: str, data: dict[str, Any], *, what: str, timeout: float, hung: str
    ) -> dict[str, Any] | None:
        """A request that runs model-written code in the kernel (a `__repr__`, a
        `__getstate__`), bounded: after *timeout* the kernel is interrupted (the handler
        answers with what it has); after the grace period it is killed and restarted, the
        restart report (*hung* says why) goes to the notices, and the answer is None.
        TimeoutError when the kernel is not cave's to kill."""
        chan = self.chan
        if chan is None:
            raise KernelDiedError(f"no kernel is running for {what}")
        fut = await chan.comm_request(op, data)
        try:
            msg = await self.race(asyncio.shield(fut), what, timeout=timeout)
        except TimeoutError:
            await self.kind.interrupt(self.chan)
            try:
                msg = await self.race(fut, what, timeout=self.settings.interrupt_grace)
            except TimeoutError:
                if not self.kind.kill():
                    raise  # not cave's to kill: the caller hears of the hang
                self.notices.append(await self.restart(hung))
                return None
        return {"data": msg["content"]["data"], "buffers": msg.get("buffers") or []}

    async def deliver(self, item: Injectable, payload: Payload | None = None) -> str | None:
        """Bind *item* in the kernel and wait for it; None, or why it failed."""
        error = await self.deliver_checked(item, payload)
        return None if error is None else str(error)

    async def deliver_checked(
        self, item: Injectable, payload: Payload | None = None
    ) -> InjectionError | None:
        """`deliver`, with the typed error: `KernelOutOfMemory` when the kernel's limit could
        not hold the value, InjectionError when the kernel could not build it or did not
        answer within `inject_timeout` (KernelDiedError when it died meanwhile)."""
        if payload is None:
            try:
                loop = asyncio.get_running_loop()
                payload = await loop.run_in_executor(None, encode_item, item)
            except InjectionError as exc:
                return exc
        try:
            reply = await self.request(
                "inject",
                inject_request(item, payload),
                payload[2],
                what=f"injecting {item.name!r}",
                timeout=inject_timeout(payload),
            )
        except TimeoutError as exc:
            return InjectionError(str(exc))
        data = reply["data"]
        if not data.get("ok"):
            if data.get("error_type") == OUT_OF_MEMORY:
                return KernelOutOfMemory(
                    f"the kernel ran out of memory building {item.name!r}: {data.get('error')}"
                )
            loop = asyncio.get_running_loop()
            try:
                fallback = await loop.run_in_executor(None, fallback_payload, item, payload)
            except InjectionError as exc:
                return exc
            if fallback is not None:
                return await self.deliver_checked(item, fallback)
            return InjectionError(f"the kernel could not load {item.name!r}: {data.get('error')}")
        return None

    async def settle(self) -> None:
        """Wait for work queued before this call: the last checkpoint, injections."""
        if self.ckpt_task is not None:
            with contextlib.suppress(Exception):
                await self.ckpt_task
            self.ckpt_task = None
        acks, self.acks = self.acks, []
        for item, fut, timeout in acks:
            name = item.name
            try:
                reply = await self.race(fut, f"injecting {name!r}", timeout)
            except Exception as exc:
                self.notices.append(f"Injecting {name!r} failed: {exc}")
                continue
            if not reply["content"]["data"].get("ok"):
                if self.injected.get(name) is item:
                    del self.injected[name]  # not in the kernel: not re-injected either
                self.notices.append(
                    f"Injecting {name!r} failed in the kernel: "
                    f"{reply['content']['data'].get('error')}"
                )

    # -- checkpoint --------------------------------------------------------------------------
    def checkpoint_soon(self, names: list[str]) -> None:
        """Checkpoint *names* in the background; the next request waits for it (`settle`)."""
        self.ckpt_task = asyncio.ensure_future(self._checkpoint(names))

    def checkpoint_timeout(self) -> float:
        """Seconds a checkpoint may take: `checkpoint_timeout`, or the cell timeout if shorter
        (saving what a cell made never waits longer than the cell could run)."""
        cell = self.settings.cell_timeout
        limit = self.settings.checkpoint_timeout
        return min(limit, cell) if cell else limit

    async def _checkpoint(self, names: list[str]) -> None:
        """Checkpoint *names*, bounded like a summary (`bounded_request`): a value whose
        `__getstate__` or `__reduce__` hangs is interrupted, a kernel that will not stop is
        restarted; either way the names not saved are reported lost at the next restart."""
        room = self.store.room_for(names)
        timeout = self.checkpoint_timeout()
        for name in names:  # what a restart during this checkpoint says of them
            self.store.stale[name] = "its checkpoint was stopped"
        try:
            reply = await self.bounded_request(
                "checkpoint",
                {"names": names, "budget": room, "keep": self.checkpoint_key},
                what="checkpointing",
                timeout=timeout,
                hung=(
                    f"was restarted: saving {', '.join(names)} after the cell took over "
                    f"{timeout:g}s and ignored the interrupt (a __getstate__ that hangs?)"
                ),
            )
        except Exception as exc:
            self.store.checkpoint_failed(names, f"the checkpoint did not complete: {exc}")
            return
        if reply is not None:
            self.store.store(reply["data"], reply["buffers"])


def _before_install() -> None:
    """What a boot needs once its kernel is up that does not need the kernel: the shipped
    modules read, the channel's module imported (any thread)."""
    import cave_tui.runtime.kernel.channel  # noqa: F401

    bootstrap_sources()
