"""The two kinds of kernel a runtime can have: one cave launched, one it was given.

Each kind knows how to start (or connect to) its kernel, notice its death, interrupt it,
kill it, restart it (or refuse to), and let it go; the supervisor and the cell code ask the
kind, never which kind it is.
"""

from __future__ import annotations

import asyncio
import json
import os
import secrets
import shutil
import signal
import sys
import time
from abc import ABC, abstractmethod
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from cave_tui.runtime.base import NamespaceChange
from cave_tui.runtime.kernel import limits
from cave_tui.runtime.kernel.cell import CellOutcome
from cave_tui.runtime.kernel.errors import KernelDiedError, KernelLaunchError
from cave_tui.runtime.kernel.hostfiles import (
    RunDirs,
    make_run_dirs,
    pin_sockets,
    write_connection,
)
from cave_tui.runtime.kernel.install import kernel_argv
from cave_tui.runtime.kernel.netns import private_network_problem
from cave_tui.runtime.kernel.process import KernelExit, KernelProcess
from cave_tui.runtime.kernel.sandbox import (
    SandboxPlan,
    bwrap_argv,
    inner_pid,
    kernel_plan,
    new_uid,
)
from cave_tui.runtime.kernel.seccomp import SECCOMP_FD
from cave_tui.runtime.kernel.settings import KernelSettings

if TYPE_CHECKING:
    import zmq.asyncio

    from cave_tui.runtime.kernel.channel import MessageRouter

T = TypeVar("T")
PORT_KEYS = ("shell_port", "iopub_port", "stdin_port", "control_port", "hb_port")


class KernelHost(Protocol):
    """What a kind uses of the supervisor that keeps its kernel (`KernelSupervisor`)."""

    ctx: zmq.asyncio.Context | None
    chan: MessageRouter | None
    boots: int  # one more at each boot: a watch tells a new kernel from the one it saw
    stopping: bool
    kernel_session: str | None  # the session id the installed kernel signs with
    notices: list[str]
    on_change: Callable[[NamespaceChange], None]

    def on_exit(self, info: KernelExit) -> None: ...
    def close_channel(self) -> None: ...
    def forget_pending(self) -> None: ...
    async def reboot(self, reason: str, started: float) -> str: ...
    async def race(self, fut: Awaitable[T], what: str, timeout: float | None = None) -> T: ...


class KernelKind(ABC):
    """How the runtime reaches, controls and lets go of its kernel."""

    owned: ClassVar[bool]  # cave started this kernel: it may limit, kill and restart it
    lost_outcome: ClassVar[CellOutcome]  # a cell's outcome when the kernel goes away under it
    # the checkpoint stays on the kernel's machine (only sizes reach the host): a remote
    # kernel's values never cross the network just to be kept
    keeps_checkpoint: ClassVar[bool] = False
    # the kernel runs this host's interpreter (cave launched it with `sys.executable`): it
    # is sent the shipped modules compiled (`install.bootstrap_code`), not as source
    runs_this_python: ClassVar[bool] = False
    runtime_dir: str | None = None  # the kernel's private directory (owned kernels)
    workdir: str | None = None  # the kernel's working directory (owned kernels)

    @property
    def kernel_pid(self) -> int | None:
        """The kernel's process id, when cave launched it and it runs."""
        return None

    @property
    def code_pid(self) -> int | None:
        """The process that runs the cells and holds their memory (`kernel_pid` but under
        the sandbox, where that is bwrap)."""
        return self.kernel_pid

    @property
    def has_live_process(self) -> bool:
        """A kernel process cave launched is running."""
        return False

    @abstractmethod
    def auto_memory_limit(self) -> int | None:
        """The memory limit `memory_limit="auto"` stands for."""

    @abstractmethod
    def resolve_user(
        self, run_as: str | int | None, *, private_folder: bool = True
    ) -> limits.KernelUser | None:
        """The user the kernel runs as, for `run_as` (None: the host's own); *private_folder*:
        it works in a folder of its own, not one of the host's (see `limits.resolve_user`)."""

    @abstractmethod
    async def start(self, sup: KernelHost) -> dict[str, Any]:
        """Launch or connect to the kernel; returns its connection info."""

    async def abort(self) -> None:
        """A boot failed after `start`: undo what `start` began."""

    def open_channel(self, info: dict[str, Any], ctx: zmq.asyncio.Context) -> MessageRouter:
        """The channel to the kernel `start` returned *info* for (its ZeroMQ sockets)."""
        from cave_tui.runtime.kernel.channel import KernelChannel

        return KernelChannel(info, ctx)

    def watch(self, sup: KernelHost) -> None:
        """After a boot: keep watching the kernel for its death, where `start` does not."""

    @abstractmethod
    def died(self) -> asyncio.Future[KernelExit]:
        """Resolves when the kernel is gone (a future that never resolves when none runs)."""

    @abstractmethod
    async def interrupt(self, chan: MessageRouter | None) -> None:
        """Interrupt the running cell (KeyboardInterrupt in the kernel)."""

    @abstractmethod
    def kill(self) -> bool:
        """Kill the kernel at once, as the host's own act; False when it is not cave's to kill."""

    @abstractmethod
    async def restart(self, sup: KernelHost, reason: str) -> str:
        """Replace the kernel with a fresh one holding the state back; returns the report.

        Raises KernelDiedError when this kind cannot restart its kernel."""

    @abstractmethod
    async def revive(self, sup: KernelHost) -> None:
        """Before a request: make sure the kernel answering is the one set up (restart or
        re-attach it if not; KernelDiedError when that cannot be done)."""

    @abstractmethod
    async def stop(self) -> None:
        """Let the kernel go: kill it if cave owns it, else leave it running."""

    def cleanup(self) -> None:
        """After the I/O loop stopped: remove what `start` left on disk."""

    def abandon(self) -> None:
        """Last resort at interpreter exit or garbage collection (synchronous)."""


class OwnedKernel(KernelKind):
    """A kernel cave launched: limited, watched through its launcher, killed and restarted."""

    owned = True
    lost_outcome = CellOutcome.DIED
    runs_this_python = True

    def __init__(self, settings: KernelSettings) -> None:
        self.settings = settings
        self.process: KernelProcess | None = None
        self._inner: tuple[int, int] | None = None  # (bwrap's pid, the kernel's inside it)
        self.sandbox: SandboxPlan | None = None  # what the kernel runs in (sandboxed kernels)
        self.sandbox_uid = new_uid()  # its uid inside its user namespace, kept across restarts
        self.private_net = False  # unsandboxed, in a network namespace of its own (netns.py)

    def auto_memory_limit(self) -> int | None:
        return limits.half_of_ram()

    def resolve_user(
        self, run_as: str | int | None, *, private_folder: bool = True
    ) -> limits.KernelUser | None:
        return limits.resolve_user(run_as, private_folder=private_folder)

    @property
    def kernel_pid(self) -> int | None:
        return self.process.kernel_pid if self.process is not None else None

    @property
    def code_pid(self) -> int | None:
        pid = self.kernel_pid
        if pid is None or self.sandbox is None:
            return pid
        if self._inner is None or self._inner[0] != pid:  # found once per boot
            inner = inner_pid(pid, self.sandbox.bwrap)
            if inner is None:
                return pid  # not started yet (or gone): bwrap's, until it is
            self._inner = (pid, inner)
        return self._inner[1]

    @property
    def has_live_process(self) -> bool:
        return self.process is not None and self.process.alive

    async def start(self, sup: KernelHost) -> dict[str, Any]:
        dirs = self._prepare_dirs()
        info = self._connection(dirs, sup.boots)
        user = self.settings.user
        env = limits.kernel_environment(
            extra=self.settings.extra_env,
            home=dirs.sub("home"),
            tmp=dirs.sub("tmp"),
            user=user.name if user else None,
            memory_limited=self.settings.memory_limit is not None,
        )
        plan = self._plan(info, sup.boots, env)
        proc = KernelProcess(plan, env, dirs.log)
        proc.on_exit = sup.on_exit
        try:
            proc.launch(asyncio.get_running_loop())
        except BaseException:
            for directory in plan.cgroups.values():
                limits.remove_cgroup(directory)
            raise
        self.process = proc
        return await self._pinned(dirs, info, sup.boots)

    async def _pinned(self, dirs: RunDirs, info: dict[str, Any], boot: int) -> dict[str, Any]:
        """*info* with the host's own links to the kernel's sockets (hostfiles.pin_sockets),
        once it has bound them; never the paths in run/, which the kernel may change."""
        ports = [info[key] for key in PORT_KEYS]
        owner = self.settings.user.uid if self.settings.user is not None else os.getuid()
        deadline = time.monotonic() + self.settings.startup_timeout
        pinned = None
        while pinned is None and time.monotonic() < deadline:
            pinned = pin_sockets(dirs, f"k{boot}", ports, owner)
            if pinned is None and self.has_live_process:
                await asyncio.sleep(0.01)
            elif pinned is None:
                break  # it died: the boot reports why
        # not all bound (it died, or is too slow): links that never appear fail the boot
        return {**info, "ip": pinned or os.path.join(dirs.sockets, f"k{boot}")}

    def _prepare_dirs(self) -> RunDirs:
        if self.runtime_dir is not None:
            return RunDirs(self.runtime_dir)
        dirs = make_run_dirs(self.settings.user)
        self.runtime_dir = dirs.base
        cwd = self.settings.cwd
        if cwd is None:
            self.workdir = dirs.sub("work")
        else:
            self.workdir = os.path.abspath(os.path.expanduser(cwd))
            Path(self.workdir).mkdir(parents=True, exist_ok=True)
        return dirs

    def _connection(self, dirs: RunDirs, boot: int) -> dict[str, Any]:
        """Signed ipc sockets in the kernel's run/ directory; the file in the host's conn/."""
        info: dict[str, Any] = {
            "shell_port": 1,
            "iopub_port": 2,
            "stdin_port": 3,
            "control_port": 4,
            "hb_port": 5,
            "ip": os.path.join(dirs.sub("run"), f"k{boot}"),
            "key": secrets.token_hex(32),  # every message is signed (HMAC-SHA256)
            "transport": "ipc",
            "signature_scheme": "hmac-sha256",
            "kernel_name": "",
        }
        info["connection_file"] = write_connection(dirs, boot, info, self.settings.user)
        return info

    def _plan(self, info: dict[str, Any], boot: int, env: dict[str, str]) -> limits.LaunchPlan:
        assert self.runtime_dir is not None and self.workdir is not None
        settings = self.settings
        argv = kernel_argv(sys.executable, info["connection_file"])
        if settings.sandbox:
            self.sandbox = self._sandbox_plan(info, env)
            argv = [*bwrap_argv(self.sandbox), *argv]
        plan = limits.LaunchPlan(
            argv=argv,
            cwd=self.workdir,
            connection_file=info["connection_file"],
            memory_limit=settings.memory_limit,
            address_space_limit=(
                limits.address_space_backstop(settings.memory_limit)
                if settings.memory_limit
                else None
            ),
            max_processes=settings.max_processes,
            runtime_dir=self.runtime_dir,
        )
        if not settings.sandbox and not settings.allow_net:  # bwrap has its own (sandbox.py)
            plan.private_net = private_network_problem() is None
        self.private_net = plan.private_net
        if self.sandbox is not None and self.sandbox.seccomp is not None:
            plan.seccomp_fd = SECCOMP_FD
            plan.seccomp_program = self.sandbox.seccomp.hex()
        user = settings.user
        if user is not None:
            plan.uid, plan.gid, plan.user = user.uid, user.gid, user.name
            needed = [*limits.needed_paths(), self.workdir, self.runtime_dir]
            plan.expose = limits.blocked_ancestors(needed, user)
            plan.hide_proc = limits.can_isolate_mounts()
            if plan.expose and not plan.hide_proc:
                raise KernelLaunchError(
                    f"cannot run the kernel as {user.name!r}: it could not reach "
                    f"{', '.join(plan.expose)} and this host cannot give it a private mount "
                    "namespace; pass run_as=None to keep the host's user"
                )
        name = f"cave-kernel-{os.getpid()}-{id(self):x}-{boot}"
        plan.cgroups = limits.create_cgroups(name, settings.memory_limit, settings.max_processes)
        return plan

    def _sandbox_plan(self, info: dict[str, Any], env: dict[str, str]) -> SandboxPlan:
        assert self.runtime_dir is not None and self.workdir is not None
        return kernel_plan(
            self.runtime_dir,
            self.workdir,
            info["connection_file"],
            env,
            user=self.settings.user,
            uid=self.sandbox_uid,
            allow_net=self.settings.allow_net,
            tmpfs_size=_half(self.settings.memory_limit),  # /tmp and /dev/shm: the limit
            mounts=self.settings.mounts,
        )

    async def abort(self) -> None:
        if self.process is not None:
            await self.process.kill()

    def died(self) -> asyncio.Future[KernelExit]:
        if self.process is not None and self.process.exited is not None:
            return self.process.exited
        return asyncio.get_running_loop().create_future()

    async def interrupt(self, chan: MessageRouter | None) -> None:
        if self.settings.sandbox:  # a signal would reach bwrap, not the kernel in its namespace
            if chan is not None:
                await chan.send(chan.control, "interrupt_request", {}, want_reply=False)
        elif self.process is not None:
            self.process.signal(signal.SIGINT)

    def kill(self) -> bool:
        if self.process is not None:
            self.process.request_kill()
        return True

    async def restart(self, sup: KernelHost, reason: str) -> str:
        started = time.monotonic()
        sup.close_channel()
        sup.on_change(NamespaceChange(everything=True))  # the namespace is rebuilt
        if self.process is not None and self.process.alive:
            await self.process.kill()
        sup.forget_pending()
        return await sup.reboot(reason, started)

    async def revive(self, sup: KernelHost) -> None:
        proc = self.process
        if proc is None or not proc.alive or sup.chan is None:
            exited = proc.exited if proc is not None else None
            info = exited.result() if exited is not None and exited.done() else None
            reason = info.describe() if info else "was not running"
            sup.notices.append(await self.restart(sup, reason))

    async def stop(self) -> None:
        if self.process is not None:
            await self.process.kill()
            self.process = None

    def cleanup(self) -> None:
        if self.runtime_dir:
            shutil.rmtree(self.runtime_dir, ignore_errors=True)
            self.runtime_dir = None

    def abandon(self) -> None:
        if self.process is not None:
            self.process.kill_now()


def _half(size: int | None) -> int | None:
    return size // 2 if size else None


class AttachedKernel(KernelKind):
    """A kernel someone else started, given by its connection file: cave connects, watches
    its heartbeat and interrupts it, but never limits, kills or restarts it."""

    owned = False
    lost_outcome = CellOutcome.LOST

    def __init__(self, connection_file: str) -> None:
        self.connection_file = connection_file
        self.info: dict[str, Any] | None = None
        self._silent: asyncio.Future[KernelExit] | None = None  # the heartbeat stopped
        self._watcher: asyncio.Future[Any] | None = None

    def auto_memory_limit(self) -> int | None:
        return None  # not cave's to limit

    def resolve_user(
        self, run_as: str | int | None, *, private_folder: bool = True
    ) -> limits.KernelUser | None:
        return None  # it runs as whoever started it

    async def start(self, sup: KernelHost) -> dict[str, Any]:
        from cave_tui.runtime.kernel.channel import heartbeat_ok

        info: dict[str, Any] = json.loads(Path(self.connection_file).read_text())
        self._silent = asyncio.get_running_loop().create_future()
        self.info = info
        assert sup.ctx is not None
        if not await heartbeat_ok(sup.ctx, info, 2.0):
            raise KernelLaunchError(f"no kernel answers at {self.connection_file}")
        return info

    def watch(self, sup: KernelHost) -> None:
        if self._watcher is None:
            self._watcher = asyncio.ensure_future(self._heartbeat(sup))

    async def _heartbeat(self, sup: KernelHost) -> None:
        """No process to watch, so ping the heartbeat (echoed by a C thread, even mid-cell)."""
        from cave_tui.runtime.kernel.channel import ChannelClosed, heartbeat_ok

        while not sup.stopping:
            await asyncio.sleep(0.25)
            if self.info is None or sup.ctx is None:
                continue
            generation = sup.boots
            if await heartbeat_ok(sup.ctx, self.info, 0.75):
                continue
            if generation != sup.boots:
                continue  # a re-attach happened meanwhile, and checked the kernel itself
            if self._silent is not None and not self._silent.done():
                self._silent.set_result(KernelExit(exitcode=None, log=""))
            if sup.chan is not None:
                sup.chan.fail_all(ChannelClosed("the attached kernel stopped answering"))
            await self._until_it_answers(sup)

    async def _until_it_answers(self, sup: KernelHost) -> None:
        """After a missed beat: wait until the kernel (or its owner's new one) answers again."""
        from cave_tui.runtime.kernel.channel import heartbeat_ok

        assert self.info is not None and sup.ctx is not None
        while not sup.stopping and not await heartbeat_ok(sup.ctx, self.info, 0.75):
            await asyncio.sleep(0.25)

    def died(self) -> asyncio.Future[KernelExit]:
        if self._silent is not None:
            return self._silent
        return asyncio.get_running_loop().create_future()

    async def interrupt(self, chan: MessageRouter | None) -> None:
        if chan is not None:
            await chan.send(chan.control, "interrupt_request", {}, want_reply=False)

    def kill(self) -> bool:
        return False  # not cave's to kill

    async def restart(self, sup: KernelHost, reason: str) -> str:
        raise KernelDiedError("cave cannot restart an attached kernel; restart it where it runs")

    async def revive(self, sup: KernelHost) -> None:
        from cave_tui.runtime.kernel.channel import heartbeat_ok

        silent = self._silent is not None and self._silent.done()
        if not silent and await self._same_kernel(sup):
            return
        assert self.info is not None and sup.ctx is not None
        if not await heartbeat_ok(sup.ctx, self.info, 1.0):
            raise KernelDiedError(
                f"the attached kernel ({self.connection_file}) is not answering; "
                "cave cannot restart a kernel it did not start"
            )
        started = time.monotonic()
        sup.close_channel()
        sup.notices.append(await sup.reboot("stopped answering (restarted by its owner?)", started))

    async def _same_kernel(self, sup: KernelHost) -> bool:
        """A kernel can be restarted by its owner faster than a heartbeat misses a beat;
        each kernel process signs with its own session id, so ask."""
        chan = sup.chan
        if chan is None:
            return False
        msg_id, reply = await chan.send(chan.control, "kernel_info_request", {})
        assert reply is not None
        try:
            msg = await sup.race(reply, "checking the attached kernel", timeout=3.0)
        except (KernelDiedError, TimeoutError):
            return False
        finally:
            chan.forget(msg_id)
        return bool(msg["header"].get("session") == sup.kernel_session)

    async def stop(self) -> None:
        if self._watcher is not None:
            self._watcher.cancel()
            self._watcher = None
