"""`IPyKernelRuntime`: model code in a separate kernel process that can fail safely.

Same contract as `IPythonRuntime`; the code runs in an ipykernel started (or, with
`connection_file=`, attached to) by this runtime, so a segfault, a memory blowup
or an endless loop costs a restart, never the host. The parts:

* `process` / `launcher`: the process, its limits and its death;
* `channel`: the Jupyter wire (jupyter_client's Session, pyzmq);
* `bootstrap`: the runtime's side inside the kernel (cell reports,
  output cap, the `cave` comm that carries values in message buffers);
* `transport`: how values cross (Arrow, JSON, an allow-list unpickler);
* `checkpoint`: the checkpoint that makes state survive a restart.

All kernel I/O runs on one background thread with its own event loop, so the
runtime works from any event loop (or several in turn), notices a dead kernel
within milliseconds, and lets the synchronous `inject()` deliver at once.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import re
import secrets
import shutil
import signal
import sys
import tempfile
import time
import weakref
from collections.abc import Awaitable, Coroutine
from pathlib import Path
from typing import Any, TypeVar

from cave_tui.runtime.base import ExecutionResult, NamespaceChange, OutputListener, Runtime
from cave_tui.runtime.detail import Detail
from cave_tui.runtime.items import Function, Injectable, Type, Variable, validate_name
from cave_tui.runtime.kernel import limits
from cave_tui.runtime.kernel.cell import CellOutcome, CellRun
from cave_tui.runtime.kernel.checkpoint import CheckpointStore, loss_report
from cave_tui.runtime.kernel.install import bootstrap_cell, kernel_argv
from cave_tui.runtime.kernel.ioloop import IOLoop, finalize
from cave_tui.runtime.kernel.process import KernelExit, KernelLaunchError, KernelProcess
from cave_tui.runtime.kernel.transport import (
    JSON_LIMIT,
    SAFE_TYPE_NAMES,
    TransferError,
    UnsafeObjectError,
    decode_in_host,
    describe_type,
    encode_for_kernel,
)
from cave_tui.runtime.summary import VarInfo

__all__ = [
    "IPyKernelRuntime",
    "InjectionError",
    "KernelDiedError",
    "KernelLaunchError",
    "TransferError",
    "UnsafeObjectError",
]

T = TypeVar("T")
_ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
DEFAULT_CELL_TIMEOUT = 300.0
DEFAULT_CHECKPOINT_BYTES = 256 * 1024 * 1024
SUMMARY_LIMIT = 500
SUMMARY_TIMEOUT = 3.0


class KernelDiedError(RuntimeError):
    """The kernel died (or stopped answering) while serving a request."""


class InjectionError(TypeError):
    """A value cannot be copied into the kernel; the message says why and what to do."""


# -- the runtime ------------------------------------------------------------------------------


class IPyKernelRuntime(Runtime):
    """Runs cells in a separate ipykernel process with limits, restarts and checkpoints.

    Values cross as copies (Arrow or dill into the kernel; Arrow, JSON or an
    allow-list pickle back out). See docs/kernel.md for the guarantees.
    """

    def __init__(
        self,
        variables: list[Variable] | None = None,
        functions: list[Function] | None = None,
        types: list[Type] | None = None,
        security_checker: Any = None,
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
    ) -> None:
        super().__init__(variables, functions, types, security_checker)
        self.connection_file = str(connection_file) if connection_file is not None else None
        if memory_limit == "auto":
            memory_limit = None if self.connection_file else _half_of_ram()
        self.memory_limit = limits.parse_size(memory_limit)
        self.cell_timeout = cell_timeout
        self.cwd = str(cwd) if cwd is not None else None
        self.trust_kernel = trust_kernel
        self.output_limit = output_limit
        self._store = CheckpointStore(limits.parse_size(checkpoint_bytes) or 0)
        self.interrupt_grace = interrupt_grace
        self.max_processes = max_processes
        self.user = None if self.connection_file else limits.resolve_user(run_as)
        self.extra_env = dict(env or {})
        limits.kernel_environment({}, self.extra_env, home="/", tmp="/")  # refuse secrets now
        self.json_limit = json_limit
        self.startup_timeout = startup_timeout
        self.switch_interval = switch_interval
        self.kernel_info: dict[str, Any] = {}
        self.runtime_dir: str | None = None
        self._io: IOLoop | None = None
        self._proc_ref: list[KernelProcess | None] = [None]
        self._chan: Any = None
        self._ctx: Any = None
        self._conn: dict[str, Any] | None = None
        self._lock: asyncio.Lock | None = None
        self._cell: CellRun | None = None
        self._notices: list[str] = []
        self._acks: list[tuple[Injectable, asyncio.Future[Any]]] = []
        self._ckpt_task: asyncio.Future[Any] | None = None
        self._recovery: asyncio.Future[Any] | None = None
        self._summary_cache: list[VarInfo] = []
        self._listing_cache: list[VarInfo] = []
        self._hb_task: asyncio.Future[Any] | None = None
        self._hb_dead: asyncio.Future[KernelExit] | None = None
        self._started = False
        self._stopping = False
        self._boots = 0
        self._chan_ready = False
        self._kernel_session: str | None = None
        self._undescribable: set[str] = set()  # names whose description hung
        self._safe_summary = False
        self.workdir: str | None = None
        self._finalizer: weakref.finalize | None = None
        self._last_outcome: CellOutcome | None = None

    # -- plumbing ------------------------------------------------------------------------
    @property
    def checkpoint_bytes(self) -> int:
        """Budget for the checkpoint kept in the host (0 turns checkpoints off)."""
        return self._store.budget

    @checkpoint_bytes.setter
    def checkpoint_bytes(self, value: int | str) -> None:
        self._store.budget = limits.parse_size(value) or 0

    @property
    def label(self) -> str:
        return "kernel"

    @property
    def last_outcome(self) -> CellOutcome | None:
        """How the last cell sent to the kernel ended (None before the first, or when the
        last `execute` found no kernel to send it to)."""
        return self._last_outcome

    @property
    def _proc(self) -> KernelProcess | None:
        return self._proc_ref[0]

    @property
    def kernel_pid(self) -> int | None:
        """The kernel process id (None when attached or not running)."""
        return self._proc.kernel_pid if self._proc is not None else None

    def _ensure_io(self) -> IOLoop:
        if self._io is None:
            self._io = IOLoop()
            self._finalizer = weakref.finalize(self, finalize, self._proc_ref, self._io, None)
        return self._io

    async def _call(self, coro: Coroutine[Any, Any, T]) -> T:
        io = self._ensure_io()
        return await asyncio.wrap_future(io.submit(coro))

    def _died_future(self) -> asyncio.Future[KernelExit]:
        if self._proc is not None and self._proc.exited is not None:
            return self._proc.exited
        if self._hb_dead is not None:
            return self._hb_dead
        fut: asyncio.Future[KernelExit] = asyncio.get_running_loop().create_future()
        return fut

    async def _race(self, fut: Awaitable[T], what: str, timeout: float | None = None) -> T:
        """Await *fut* unless the kernel dies first (then KernelDiedError, at once)."""
        died = self._died_future()
        task = asyncio.ensure_future(fut)
        try:
            done, _ = await asyncio.wait(
                {task, died}, timeout=timeout, return_when=asyncio.FIRST_COMPLETED
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

    # -- lifecycle --------------------------------------------------------------------------
    async def start(self) -> None:
        await self._call(self._start())

    async def _start(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._started and self._chan is not None:
                return
            self._stopping = False
            await self._boot(restore=False)
            self._started = True

    async def stop(self) -> None:
        if self._io is None:
            return
        try:
            await self._call(self._stop())
        finally:
            io, self._io = self._io, None
            if self._finalizer is not None:
                self._finalizer.detach()
            io.stop()
            if self.runtime_dir:
                shutil.rmtree(self.runtime_dir, ignore_errors=True)
                self.runtime_dir = None

    async def _stop(self) -> None:
        self._stopping = True
        if self._hb_task is not None:
            self._hb_task.cancel()
            self._hb_task = None
        self._close_channel()
        if self._proc is not None:
            await self._proc.kill()
            self._proc_ref[0] = None
        if self._ctx is not None:
            self._ctx.destroy(linger=0)
            self._ctx = None
        self._started = False
        self._lock = None
        self._store.clear()
        self._acks.clear()
        self._ckpt_task = None

    def _close_channel(self) -> None:
        self._chan_ready = False
        if self._chan is not None:
            self._chan.close()
            self._chan = None

    async def restart(self) -> str:
        """Kill and restart the kernel, then restore the checkpoint; returns the report."""
        return await self._call(self._restart_locked("was restarted on request"))

    async def _restart_locked(self, reason: str) -> str:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            if self._proc is not None and self._proc.alive:
                await self._settle()  # the last cell's checkpoint first
            notice = await self._restart(reason)
            self._notices.append(notice)
            return notice

    # -- boot -----------------------------------------------------------------------------
    def _prepare_dirs(self) -> None:
        if self.runtime_dir is not None:
            return
        self.runtime_dir = tempfile.mkdtemp(prefix="cave-kernel-")
        base = Path(self.runtime_dir)
        for sub in ("home", "tmp", "run", "work"):
            (base / sub).mkdir(mode=0o700)
        if self.cwd is None:
            self.workdir = str(base / "work")
        else:
            self.workdir = os.path.abspath(os.path.expanduser(self.cwd))
            Path(self.workdir).mkdir(parents=True, exist_ok=True)
        if self.user is not None:
            for path in [base, *(base / s for s in ("home", "tmp", "run", "work"))]:
                os.chown(path, self.user.uid, self.user.gid)
        if self._finalizer is not None:
            self._finalizer.detach()
        assert self._io is not None
        self._finalizer = weakref.finalize(
            self, finalize, self._proc_ref, self._io, self.runtime_dir
        )

    def _connection(self) -> dict[str, Any]:
        from jupyter_client.connect import write_connection_file

        assert self.runtime_dir is not None
        path = os.path.join(self.runtime_dir, "run", f"kernel-{self._boots}.json")
        _, info = write_connection_file(
            path,
            transport="ipc",
            ip=os.path.join(self.runtime_dir, "run", f"k{self._boots}"),
            key=secrets.token_hex(32).encode(),  # every message is signed (HMAC-SHA256)
        )
        if self.user is not None:
            os.chown(path, self.user.uid, self.user.gid)
        info = dict(info)
        info["connection_file"] = path
        return info

    def _plan(self, info: dict[str, Any]) -> limits.LaunchPlan:
        assert self.runtime_dir is not None
        argv = kernel_argv(sys.executable, info["connection_file"])
        plan = limits.LaunchPlan(
            argv=argv,
            cwd=self.workdir,
            connection_file=info["connection_file"],
            memory_limit=self.memory_limit,
            max_processes=self.max_processes,
            runtime_dir=self.runtime_dir,
        )
        if self.user is not None:
            plan.uid, plan.gid, plan.user = self.user.uid, self.user.gid, self.user.name
            needed = [*limits.needed_paths(), self.workdir, self.runtime_dir]
            plan.expose = limits.blocked_ancestors(needed, self.user)
            plan.hide_proc = limits.can_isolate_mounts()
            if plan.expose and not plan.hide_proc:
                raise KernelLaunchError(
                    f"cannot run the kernel as {self.user.name!r}: it could not reach "
                    f"{', '.join(plan.expose)} and this host cannot give it a private mount "
                    "namespace; pass run_as=None to keep the host's user"
                )
        name = f"cave-kernel-{os.getpid()}-{id(self):x}-{self._boots}"
        plan.cgroups = limits.create_cgroups(name, self.memory_limit, self.max_processes)
        return plan

    async def _boot(self, *, restore: bool) -> tuple[list[str], list[str], dict[str, str]]:
        """Start (or attach to) a kernel and install the runtime's side in it."""
        import zmq.asyncio

        from cave_tui.runtime.kernel.channel import KernelChannel

        loop = asyncio.get_running_loop()
        if self._ctx is None:
            self._ctx = zmq.asyncio.Context()
        self._boots += 1
        if self.connection_file:
            info = json.loads(Path(self.connection_file).read_text())
            self._hb_dead = loop.create_future()
        else:
            self._prepare_dirs()
            assert self.runtime_dir is not None
            info = self._connection()
            plan = self._plan(info)
            env = limits.kernel_environment(
                extra=self.extra_env,
                home=os.path.join(self.runtime_dir, "home"),
                tmp=os.path.join(self.runtime_dir, "tmp"),
                user=self.user.name if self.user else None,
                memory_limited=self.memory_limit is not None,
            )
            proc = KernelProcess(plan, env, os.path.join(self.runtime_dir, "launcher.log"))
            proc.on_exit = self._on_exit
            try:
                proc.launch(loop)
            except BaseException:
                for directory in plan.cgroups.values():
                    limits.remove_cgroup(directory)
                raise
            self._proc_ref[0] = proc
        self._conn = info
        if self.connection_file:
            from cave_tui.runtime.kernel.channel import heartbeat_ok

            if not await heartbeat_ok(self._ctx, info, 2.0):
                raise KernelLaunchError(f"no kernel answers at {self.connection_file}")
        chan = KernelChannel(info, self._ctx)
        self._chan = chan
        try:
            await self._wait_ready(chan)
            await self._install(chan)
        except BaseException:
            self._close_channel()
            if self._proc is not None:
                await self._proc.kill()
            raise
        self._chan_ready = True
        if self.connection_file and self._hb_task is None:
            self._hb_task = asyncio.ensure_future(self._heartbeat())
        names = self._store.names
        first = not names and not self._store.entries
        items = [i for n, i in list(self._injected.items()) if first or not restore or n in names]
        reinjected: list[str] = []
        for item in items:
            error = await self._inject_now(item)
            if error is None:
                reinjected.append(item.name)
            else:
                self._notices.append(error)
        restored: list[str] = []
        failed: dict[str, str] = {}
        if restore and self._store.entries:
            data, buffers = self._store.restore_request()
            reply = await self._request("restore", data, buffers, what="restoring the checkpoint")
            restored = list(reply["data"].get("restored", []))
            failed = dict(reply["data"].get("failed", {}))
            for name in failed:
                self._store.entries.pop(name, None)
        return reinjected, restored, failed

    async def _wait_ready(self, chan: Any) -> None:
        """kernel_info until the shell answers and IOPub delivers (no lost output)."""
        deadline = time.monotonic() + self.startup_timeout
        pending: list[str] = []
        died = self._died_future()
        try:
            while True:
                msg_id, reply = await chan.send(chan.shell, "kernel_info_request", {})
                pending.append(msg_id)
                assert reply is not None
                done, _ = await asyncio.wait([reply, died], timeout=0.25)
                if died in done:
                    info = died.result()
                    raise KernelLaunchError(
                        f"the kernel {info.describe()} while starting:\n{info.log.strip()[-3000:]}"
                    )
                if reply in done:
                    self.kernel_info = reply.result()["content"]
                    self._kernel_session = reply.result()["header"].get("session")
                    with contextlib.suppress(TimeoutError):
                        await asyncio.wait_for(chan.iopub_seen.wait(), 1.0)
                    if chan.iopub_seen.is_set():
                        return
                if time.monotonic() > deadline:
                    raise KernelLaunchError(
                        f"the kernel did not start within {self.startup_timeout:g}s"
                    )
        finally:
            for msg_id in pending:
                chan.forget(msg_id)

    async def _install(self, chan: Any) -> None:
        config = {
            "output_limit": self.output_limit,
            "switch_interval": self.switch_interval,
            "extra_paths": _host_paths(),
            "own_kernel": not self.connection_file,
        }
        msg_id, reply = await chan.send(
            chan.shell,
            "execute_request",
            {
                "code": bootstrap_cell(config),
                "silent": True,
                "store_history": False,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": False,
            },
        )
        assert reply is not None
        content = (await self._race(reply, "start-up", 30))["content"]
        chan.forget(msg_id)
        if content.get("status") != "ok":
            trace = _ANSI.sub("", "\n".join(content.get("traceback", [])))
            raise KernelLaunchError(f"the runtime could not install itself in the kernel:\n{trace}")
        await chan.comm_open()
        hello = await self._request("hello", {}, what="start-up")
        self.kernel_info.update(hello["data"])

    # -- deaths -----------------------------------------------------------------------------
    def _on_exit(self, info: KernelExit) -> None:
        """Runs on the I/O loop when the launcher is gone."""
        from cave_tui.runtime.kernel.channel import ChannelClosed

        if self._chan is not None:
            self._chan.fail_all(ChannelClosed(f"the kernel {info.describe()}"))
        if info.requested or self._stopping or self._cell is not None:
            return  # whoever killed it, or the running cell, deals with it
        if self._recovery is None or self._recovery.done():
            self._recovery = asyncio.ensure_future(self._recover(info))

    async def _recover(self, info: KernelExit) -> None:
        assert self._lock is not None
        async with self._lock:
            if self._stopping or (self._proc is not None and self._proc.alive):
                return
            reason = info.describe() + " while idle"
            try:
                self._notices.append(await self._restart(reason, already_dead=True))
            except Exception as exc:
                self._notices.append(f"The kernel {reason} and could not be restarted: {exc}")

    async def _heartbeat(self) -> None:
        """Attached kernels: no process to watch, so ping the heartbeat (echoed in C)."""
        from cave_tui.runtime.kernel.channel import ChannelClosed, heartbeat_ok

        while not self._stopping:
            await asyncio.sleep(0.25)
            if self._conn is None or self._ctx is None:
                continue
            generation = self._boots
            if await heartbeat_ok(self._ctx, self._conn, 0.75):
                continue
            if generation != self._boots:
                continue  # a re-attach happened meanwhile, and checked the kernel itself
            info = KernelExit(exitcode=None, log="")
            if self._hb_dead is not None and not self._hb_dead.done():
                self._hb_dead.set_result(info)
            if self._chan is not None:
                self._chan.fail_all(ChannelClosed("the attached kernel stopped answering"))
            while not self._stopping and not await heartbeat_ok(self._ctx, self._conn, 0.75):
                await asyncio.sleep(0.25)

    async def _ensure_kernel(self) -> None:
        """Make sure a live kernel is there (restarting or re-attaching as needed)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        if not self._started:
            self._stopping = False
            await self._boot(restore=False)
            self._started = True
            return
        if self.connection_file:
            dead = self._hb_dead is not None and self._hb_dead.done()
            if dead or not await self._same_kernel():
                await self._reattach()
            return
        if self._proc is None or not self._proc.alive or self._chan is None:
            info = (
                self._proc.exited.result()
                if self._proc and self._proc.exited and self._proc.exited.done()
                else None
            )
            reason = info.describe() if info else "was not running"
            self._notices.append(await self._restart(reason, already_dead=True))

    async def _same_kernel(self) -> bool:
        """Attached kernels can be restarted behind our back faster than a heartbeat
        misses a beat; each kernel process signs with its own session id, so ask."""
        chan = self._chan
        if chan is None:
            return False
        msg_id, reply = await chan.send(chan.control, "kernel_info_request", {})
        try:
            msg = await self._race(reply, "checking the attached kernel", timeout=3.0)
        except (KernelDiedError, TimeoutError):
            return False
        finally:
            chan.forget(msg_id)
        return msg["header"].get("session") == self._kernel_session

    async def _reattach(self) -> None:
        from cave_tui.runtime.kernel.channel import heartbeat_ok

        assert self._conn is not None and self._ctx is not None
        if not await heartbeat_ok(self._ctx, self._conn, 1.0):
            raise KernelDiedError(
                f"the attached kernel ({self.connection_file}) is not answering; "
                "cave cannot restart a kernel it did not start"
            )
        started = time.monotonic()
        self._close_channel()
        reinjected, restored, failed = await self._boot(restore=True)
        self._notices.append(
            loss_report(
                "stopped answering (restarted by its owner?)",
                self._store,
                restored=restored,
                reinjected=reinjected,
                failed=failed,
                elapsed=time.monotonic() - started,
            )
        )

    async def _restart(self, reason: str, *, already_dead: bool = False) -> str:
        if self.connection_file:
            raise KernelDiedError(
                "cave cannot restart an attached kernel; restart it where it runs"
            )
        started = time.monotonic()
        self._close_channel()
        self.namespace_changed(NamespaceChange(everything=True))  # the namespace is rebuilt
        if self._proc is not None and self._proc.alive:
            await self._proc.kill()
        self._acks.clear()
        self._ckpt_task = None
        reinjected, restored, failed = await self._boot(restore=True)
        return loss_report(
            reason,
            self._store,
            restored=restored,
            reinjected=reinjected,
            failed=failed,
            elapsed=time.monotonic() - started,
        )

    # -- requests on the comm ------------------------------------------------------------------
    async def _request(
        self, op: str, data: dict[str, Any], buffers: list[Any] | None = None, *, what: str
    ) -> dict[str, Any]:
        chan = self._chan
        if chan is None:
            raise KernelDiedError(f"no kernel is running for {what}")
        fut = await chan.comm_request(op, data, buffers)
        msg = await self._race(fut, what)
        reply = msg["content"]["data"]
        return {"data": reply, "buffers": msg.get("buffers") or []}

    async def _settle(self) -> None:
        """Wait for work queued before this call: the last checkpoint, injections."""
        if self._ckpt_task is not None:
            with contextlib.suppress(Exception):
                await self._ckpt_task
            self._ckpt_task = None
        acks, self._acks = self._acks, []
        for item, fut in acks:
            name = item.name
            try:
                reply = await self._race(fut, f"injecting {name!r}")
            except Exception as exc:
                self._notices.append(f"Injecting {name!r} failed: {exc}")
                continue
            if not reply["content"]["data"].get("ok"):
                if self._injected.get(name) is item:
                    del self._injected[name]  # not in the kernel: not re-injected either
                self._notices.append(
                    f"Injecting {name!r} failed in the kernel: "
                    f"{reply['content']['data'].get('error')}"
                )

    # -- the contract ----------------------------------------------------------------------------
    def inject(self, item: Injectable) -> None:
        """Copy *item* into the kernel (now if it is running, else at start).

        The value is serialised here, at call time: later changes on either
        side are not shared. Raises InjectionError when it cannot be copied.
        """
        payload = self._encode_item(item)
        self._injected[item.name] = item
        io = self._io
        if io is None:
            self._note_injected(item.name)  # delivered when the kernel starts
        else:
            io.loop.call_soon_threadsafe(self._send_inject_soon, item, payload)
        self.namespace_changed(NamespaceChange(changed=(item.name,)))

    async def ainject(self, item: Injectable) -> None:
        """`inject` that waits for the kernel's acknowledgement and raises on failure."""
        payload = await asyncio.get_running_loop().run_in_executor(None, self._encode_item, item)
        error = await self._call(self._inject_locked(item, payload))
        if error is not None:
            raise InjectionError(error)
        self.namespace_changed(NamespaceChange(changed=(item.name,)))

    def _note_injected(self, name: str) -> None:
        if name not in self._store.names:
            self._store.names.append(name)
        self._store.forget_entry(name)  # a checkpoint of the old value is stale

    def _encode_item(self, item: Injectable) -> tuple[str, dict[str, Any], list[Any]]:
        if not isinstance(item, Variable | Function | Type):
            raise TypeError(
                f"inject() takes a Variable, Function or Type, not {type(item).__name__}"
            )
        validate_name(item.name)
        try:
            return encode_for_kernel(item.value)
        except TransferError as exc:
            raise InjectionError(
                f"cannot copy {item.name!r} ({describe_type(item.value)}) into the kernel: {exc}. "
                "The kernel runtime injects copies, and this object cannot be serialised "
                "(live handles such as connections, open files, locks and threads cannot). "
                "Options: inject what it needs to be recreated (a path, a URL, parameters) and "
                "a Function that opens it inside the kernel, or use IPythonRuntime, which "
                "shares live objects."
            ) from None

    def _send_inject_soon(self, item: Injectable, payload: Any) -> None:
        self._note_injected(item.name)

        async def send() -> None:
            chan = self._chan
            if chan is None or not self._chan_ready:
                return  # a (re)start in progress: it injects everything in `_injected`
            fut = await chan.comm_request("inject", self._inject_data(item, payload), payload[2])
            self._acks.append((item, fut))

        task = asyncio.ensure_future(send())
        task.add_done_callback(lambda t: t.exception() if not t.cancelled() else None)

    def _inject_data(self, item: Injectable, payload: Any) -> dict[str, Any]:
        codec, meta, _ = payload
        return {"name": item.name, "codec": codec, "meta": meta}

    async def _inject_locked(self, item: Injectable, payload: Any) -> str | None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._ensure_kernel()
            await self._settle()
            error = await self._inject_now(item, payload)
            if error is None:
                self._injected[item.name] = item
                self._note_injected(item.name)
            return error

    async def _inject_now(self, item: Injectable, payload: Any = None) -> str | None:
        if payload is None:
            try:
                loop = asyncio.get_running_loop()
                payload = await loop.run_in_executor(None, self._encode_item, item)
            except InjectionError as exc:
                return str(exc)
        reply = await self._request(
            "inject", self._inject_data(item, payload), payload[2], what=f"injecting {item.name!r}"
        )
        data = reply["data"]
        if not data.get("ok"):
            return f"the kernel could not load {item.name!r}: {data.get('error')}"
        return None

    async def execute(
        self, code: str, timeout: float | None = None, *, on_output: OutputListener | None = None
    ) -> ExecutionResult:
        blocked = self.blocked_result(code)
        if blocked is not None:
            return blocked
        if timeout is None:
            timeout = self.cell_timeout
        result = await self._call(self._execute(code, timeout, on_output))
        self.result_changed(result)
        return result

    async def _execute(
        self, code: str, timeout: float | None, on_output: OutputListener | None = None
    ) -> ExecutionResult:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            self._last_outcome = None
            try:
                await self._ensure_kernel()
            except Exception as exc:
                return ExecutionResult(
                    success=False,
                    error=f"the kernel is not available: {exc}",
                    error_type="KernelUnavailable",
                    notice=self._take_notices(),
                )
            await self._settle()
            cell = CellRun(self.output_limit, asyncio.get_running_loop(), on_output)
            chan = self._chan
            content = {
                "code": code,
                "silent": False,
                "store_history": False,
                "user_expressions": {},
                "allow_stdin": False,
                "stop_on_error": False,
            }
            try:
                msg_id, reply = await chan.send(
                    chan.shell, "execute_request", content, on_iopub=cell.on_iopub
                )
            except ConnectionError:  # it died between the check and the send
                return await self._finish(cell, self._gone(cell), timeout)
            assert reply is not None
            cell.set_reply(reply)
            self._cell = cell
            try:
                outcome = await self._wait_cell(cell, timeout)
            except asyncio.CancelledError:
                await asyncio.shield(self._stop_cancelled(cell))
                raise
            finally:
                self._cell = None
                chan.forget(msg_id)
            return await self._finish(cell, outcome, timeout)

    async def _wait_cell(self, cell: CellRun, timeout: float | None) -> CellOutcome:
        """How the cell ended (DONE, STUCK, or the kernel gone: see `_gone`); escalates
        timeouts and interrupts on the way."""
        died = self._died_future()
        deadline = cell.started + timeout if timeout else None
        while True:
            if cell.done:
                return CellOutcome.DONE
            if died.done():
                return self._gone(cell)
            if cell.poked.done():
                cell.poked = cell.loop.create_future()
            wake = [t for t in (deadline, cell.escalate_at) if t is not None]
            delay = max(min(wake) - time.monotonic(), 0) if wake else None
            await asyncio.wait(
                {cell.finished, died, cell.poked},
                timeout=delay,
                return_when=asyncio.FIRST_COMPLETED,
            )
            if cell.done:
                return CellOutcome.DONE
            if died.done():
                return self._gone(cell)
            if cell.reply_failed:
                # The channel failed the reply: the kernel is going; wait for the proof.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(asyncio.shield(died), 5)
                return self._gone(cell)
            now = time.monotonic()
            if cell.escalate_at is not None and now >= cell.escalate_at:
                if self.connection_file:
                    return CellOutcome.STUCK  # not ours to kill
                await self._escalate(cell)
                cell.escalate_at = None
            elif deadline is not None and now >= deadline and not cell.timed_out:
                cell.timed_out = True
                await self._interrupt_kernel()
                cell.escalate_at = now + self.interrupt_grace

    def _gone(self, cell: CellRun) -> CellOutcome:
        """The outcome of a cell whose kernel went away."""
        if self._stopping:
            return CellOutcome.STOPPED
        if cell.killed:
            return CellOutcome.KILLED
        return CellOutcome.LOST if self.connection_file else CellOutcome.DIED

    async def _escalate(self, cell: CellRun) -> None:
        """The interrupt did not stop the cell within the grace period: kill."""
        if self.connection_file:
            return  # not ours to kill; the result says so
        cell.killed = True
        if self._proc is not None:
            self._proc.request_kill()

    async def _interrupt_kernel(self) -> None:
        if self.connection_file:
            chan = self._chan
            if chan is not None:
                await chan.send(chan.control, "interrupt_request", {}, want_reply=False)
            return
        if self._proc is not None:
            self._proc.signal(signal.SIGINT)

    async def _stop_cancelled(self, cell: CellRun) -> None:
        """The caller gave up on the cell: interrupt it, and kill it if it will not stop."""
        await self._interrupt_kernel()
        died = self._died_future()
        deadline = time.monotonic() + self.interrupt_grace
        while not cell.done and not died.done() and time.monotonic() < deadline:
            await asyncio.sleep(0.02)
        report = cell.final_report() if cell.done else {}
        if report:
            self._store.apply_cell(report.get("names"), list(report.get("deleted", [])))
        if not cell.done and not died.done() and not self.connection_file:
            await self._escalate(cell)
            with contextlib.suppress(Exception):
                self._notices.append(
                    await self._restart("was killed because a cancelled cell would not stop")
                )
        self.namespace_changed(NamespaceChange(everything=True))  # what ran before the stop

    async def _finish(
        self, cell: CellRun, outcome: CellOutcome, timeout: float | None
    ) -> ExecutionResult:
        self._last_outcome = outcome
        duration = time.monotonic() - cell.started
        result = ExecutionResult(success=False, output=cell.capture.getvalue(), duration=duration)
        result.output_truncated_chars = cell.capture.dropped
        if outcome is CellOutcome.STOPPED:
            result.error = "the runtime was stopped while this cell ran"
            result.error_type = "Stopped"
            return result
        if outcome is CellOutcome.DONE:
            self._done_result(cell, result, timeout)
        elif outcome is CellOutcome.LOST:
            result.error = "the attached kernel stopped answering while running this cell"
            result.error_type = "KernelDied"
        elif outcome is CellOutcome.STUCK:
            result.error = (
                "the cell did not stop on interrupt and cave cannot kill an attached kernel; "
                "it stays busy until the cell returns."
            )
            result.error_type = "Timeout" if cell.timed_out else "Interrupted"
            result.timed_out = cell.timed_out
            result.interrupted = True
        else:
            await self._died_result(cell, outcome, result, timeout)
        result.notice = self._take_notices()
        return result

    async def _died_result(
        self, cell: CellRun, outcome: CellOutcome, result: ExecutionResult, timeout: float | None
    ) -> None:
        """DIED or KILLED: say how the kernel went, then restart it."""
        died = self._died_future()
        info = died.result() if died.done() else None
        reason = info.describe() if info is not None else "died"
        if outcome is CellOutcome.KILLED and cell.timed_out:
            result.error = (
                f"cell timed out after {timeout:g}s; the interrupt did not stop it "
                "(stuck in native code?), so the kernel was killed and restarted."
            )
            result.error_type = "Timeout"
            result.timed_out = result.interrupted = True
            reason = "was killed after the cell timed out and ignored the interrupt"
        elif outcome is CellOutcome.KILLED:
            result.error = (
                "the cell did not stop on interrupt; the kernel was killed and restarted."
            )
            result.error_type = "Interrupted"
            result.interrupted = True
            reason = "was killed because the cell ignored the interrupt"
        else:
            fatal = info.fatal_lines() if info is not None else ""
            result.error = f"The kernel {reason} while running this cell." + (
                f"\n{fatal}" if fatal else ""
            )
            result.error_type = "KernelDied"
            if info is not None and info.oom_killed:
                result.error_type = "MemoryError"
        try:
            self._notices.append(await self._restart(reason, already_dead=True))
        except Exception as exc:
            self._notices.append(f"The kernel could not be restarted: {exc}")

    def _done_result(self, cell: CellRun, result: ExecutionResult, timeout: float | None) -> None:
        """DONE: the kernel's reply and cell report make the result."""
        reply = cell.reply.result().get("content", {}) if cell.reply is not None else {}
        report = cell.final_report()
        if isinstance(report.get("result"), str):  # the last value, sent in the report
            cell.capture.write(report["result"] + "\n")
            result.output = cell.capture.getvalue()
            result.output_truncated_chars = cell.capture.dropped
        result.success = reply.get("status") == "ok"
        result.changed = [str(n) for n in report.get("changed", [])]
        result.deleted = [str(n) for n in report.get("deleted", [])]
        if isinstance(report.get("duration"), int | float):
            result.duration = float(report["duration"])
        dropped = report.get("dropped")
        if isinstance(dropped, int) and dropped > 0:
            result.output_truncated_chars += dropped
        if not result.success:
            result.error_type = str(report.get("error_type") or reply.get("ename") or "Error")
            result.error = str(report.get("error") or _reply_error(reply, cell.error_msg))
            result.interrupted = result.error_type == "KeyboardInterrupt"
            if "memory" in report and self.memory_limit:
                rss = (report["memory"] or {}).get("rss")
                if isinstance(rss, int):
                    self._notices.append(
                        f"The kernel holds {rss / 2**20:,.0f} MiB of its "
                        f"{self.memory_limit / 2**20:,.0f}"
                        " MiB memory limit; delete large variables (del x) to free it."
                    )
        if cell.timed_out and not result.success:
            result.timed_out = result.interrupted = True
            result.error = f"cell timed out after {timeout:g}s and was stopped (KeyboardInterrupt)."
            result.error_type = "Timeout"
        elif cell.user_interrupt and result.interrupted:
            result.error_type = "KeyboardInterrupt"
        self._store.apply_cell(report.get("names") if report else None, result.deleted)
        self._undescribable -= set(result.changed) | set(result.deleted)
        changed = [n for n in result.changed if n not in result.deleted]
        if changed and self.checkpoint_bytes > 0 and report:
            self._ckpt_task = asyncio.ensure_future(self._checkpoint(changed))

    def _take_notices(self) -> str | None:
        notices, self._notices = self._notices, []
        return "\n".join(notices) if notices else None

    async def _checkpoint(self, names: list[str]) -> None:
        room = self._store.room_for(names)
        try:
            reply = await self._request(
                "checkpoint", {"names": names, "budget": room}, what="checkpointing"
            )
        except Exception:
            for name in names:
                self._store.unsaved.setdefault(name, "the checkpoint did not complete")
            return
        self._store.store(reply["data"], reply["buffers"])

    async def retrieve(self, name: str) -> Any:
        reply = await self._call(self._retrieve(name))
        data = reply["data"]
        loop = asyncio.get_running_loop()
        try:
            return await loop.run_in_executor(
                None,
                lambda: decode_in_host(
                    str(data.get("codec")),
                    dict(data.get("meta") or {}),
                    reply["buffers"],
                    trusted=self.trust_kernel,
                    limit=self.json_limit,
                ),
            )
        except TransferError as exc:
            raise _transfer_error(
                name, str(data.get("type_name", "?")), str(exc), type(exc)
            ) from None

    async def _retrieve(self, name: str) -> dict[str, Any]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._ensure_kernel()
            await self._settle()
            reply = await self._request(
                "retrieve",
                {"name": name, "trusted": self.trust_kernel, "limit": self.json_limit},
                what=f"retrieving {name!r}",
            )
        data = reply["data"]
        if not data.get("ok"):
            if data.get("error_type") == "KeyError":
                raise KeyError(str(data.get("error")))
            raise _transfer_error(name, str(data.get("type_name", "?")), str(data.get("error")))
        return reply

    async def namespace_summary(self) -> list[VarInfo]:
        return await self._call(self._summary(self.descriptions()))

    async def namespace_listing(self) -> list[VarInfo]:
        return await self._call(self._summary(self.descriptions(), limit=None))

    async def _summary(
        self, descriptions: dict[str, str], limit: int | None = SUMMARY_LIMIT
    ) -> list[VarInfo]:
        if self._lock is None:
            self._lock = asyncio.Lock()
        cache = self._summary_cache if limit is not None else self._listing_cache
        if self._cell is not None:
            return list(cache)  # a cell is running: the last summary, at once
        async with self._lock:
            await self._ensure_kernel()
            await self._settle()
            reply = await self._summary_request(descriptions, limit)
        if reply is None:
            return list(cache)
        stuck = reply["data"].get("stuck")
        if isinstance(stuck, str):
            self._undescribable.add(stuck)
            self._notices.append(
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
        self, descriptions: dict[str, str], limit: int | None = SUMMARY_LIMIT
    ) -> dict[str, Any] | None:
        """The summary runs model-defined `__repr__`s: bounded by a timeout, then an
        interrupt, then (code stuck in C) a kill and restart; None means use the cache."""
        chan = self._chan
        data = {
            "descriptions": descriptions,
            "limit": limit,  # None: every name (the inspector's listing)
            "skip": sorted(self._undescribable),
            "safe": self._safe_summary,
        }
        fut = await chan.comm_request("summary", data)
        what = "summarising the namespace"
        try:
            msg = await self._race(asyncio.shield(fut), what, timeout=SUMMARY_TIMEOUT)
        except TimeoutError:
            await self._interrupt_kernel()
            try:
                msg = await self._race(fut, what, timeout=self.interrupt_grace)
            except TimeoutError:
                if self.connection_file:
                    raise
                self._safe_summary = True  # from now on: type names only for user types
                if self._proc is not None:
                    self._proc.request_kill()
                self._notices.append(
                    await self._restart(
                        "was restarted: describing the namespace hung in native code (an "
                        "object's __repr__?); summaries now list user-defined objects by type",
                        already_dead=True,
                    )
                )
                return None
        return {"data": msg["content"]["data"], "buffers": msg.get("buffers") or []}

    async def detail(self, name: str) -> Detail:
        """Computed in the kernel: a 2-million-row frame never crosses to the host."""
        return await self._call(self._detail(name))

    async def _detail(self, name: str) -> Detail:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._ensure_kernel()
            await self._settle()
            reply = await self._request("detail", {"name": name}, what=f"describing {name!r}")
        data = reply["data"]
        if not data.get("ok"):
            raise KeyError(str(data.get("error")))
        return Detail.from_dict(dict(data.get("detail") or {}))

    async def delete(self, name: str) -> None:
        await self._call(self._delete(name))

    async def _delete(self, name: str) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._ensure_kernel()
            await self._settle()
            reply = await self._request("delete", {"name": name}, what=f"deleting {name!r}")
        if not reply["data"].get("ok"):
            raise KeyError(str(reply["data"].get("error")))
        self._injected.pop(name, None)
        self._store.forget(name)
        self.namespace_changed(NamespaceChange(deleted=(name,)))

    async def reset(self) -> None:
        await self._call(self._reset())

    async def _reset(self) -> None:
        if self._lock is None:
            self._lock = asyncio.Lock()
        async with self._lock:
            await self._ensure_kernel()
            await self._settle()
            await self._request("reset", {}, what="resetting")
            self._store.clear()
            for item in list(self._injected.values()):
                self._store.names.append(item.name)
                error = await self._inject_now(item)
                if error is not None:
                    self._notices.append(error)
        self.namespace_changed(NamespaceChange(everything=True))

    async def interrupt(self) -> None:
        await self._call(self._interrupt())

    async def _interrupt(self) -> None:
        cell = self._cell
        if cell is None:
            return
        cell.user_interrupt = True
        await self._interrupt_kernel()
        if cell.escalate_at is None:
            cell.escalate_at = time.monotonic() + self.interrupt_grace
        cell.poke()


# -- helpers -------------------------------------------------------------------------------------


def _transfer_error(
    name: str, type_name: str, detail: str, kind: type[TransferError] = TransferError
) -> TransferError:
    return kind(
        f"cannot retrieve {name!r} ({type_name}) from the kernel safely: {detail}. "
        f"Only frames and arrays (Arrow), plain data (JSON) and these types come back: "
        f"{SAFE_TYPE_NAMES}. Options: convert it inside the kernel into one of those "
        "(e.g. a dict of its fields, a DataFrame, a list) and retrieve that; or create the "
        "runtime with trust_kernel=True, which unpickles with dill and so lets code in the "
        "kernel run in this process (unsafe with untrusted code)."
    )


def _reply_error(reply: dict[str, Any], error_msg: dict[str, Any] | None) -> str:
    source = error_msg or reply
    lines = [_ANSI.sub("", str(x)) for x in source.get("traceback", [])]
    tail = "\n".join(lines[-3:]).strip()
    head = f"{source.get('ename', 'Error')}: {source.get('evalue', '')}"
    return tail if tail.endswith(head) else f"{tail}\n{head}".strip()


def _half_of_ram() -> int | None:
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return None


def _host_paths() -> list[str]:
    """The host's own import directories (scripts, projects), appended in the kernel
    so functions injected by reference from them resolve; never ahead of the stdlib."""
    prefixes = tuple({sys.prefix, sys.base_prefix, sys.exec_prefix})
    out = []
    for entry in sys.path:
        path = os.path.abspath(entry or os.getcwd())
        if os.path.isdir(path) and not path.startswith(prefixes) and path not in out:
            out.append(path)
    return out
