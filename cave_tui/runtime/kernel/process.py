"""The kernel process as the host sees it: launch, watch, signal, kill.

The host starts `launcher.py` (see there) and watches *the launcher*: it
exits only once the kernel is gone and everything the kernel started has been
killed and reaped, so its exit is the one event that says "the kernel is dead".
On Linux a pidfd makes that event immediate (no polling, no heartbeat wait);
elsewhere a thread waits on the process.
"""

from __future__ import annotations

import asyncio
import json
import os
import select
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cave_tui.runtime.kernel.errors import KernelLaunchError
from cave_tui.runtime.kernel.hostfiles import open_log, read_tail
from cave_tui.runtime.kernel.limits import (
    LaunchPlan,
    cgroup_oom_kills,
    remove_cgroup,
)
from cave_tui.runtime.shipped import SHIPPED_DIR

LAUNCHER = str(SHIPPED_DIR / "launcher.py")
_SIGNAL_WORDS = {
    "SIGSEGV": "crashed with a segmentation fault (SIGSEGV)",
    "SIGBUS": "crashed with a bus error (SIGBUS)",
    "SIGABRT": "aborted (SIGABRT)",
    "SIGKILL": "was killed (SIGKILL)",
    "SIGILL": "crashed on an illegal instruction (SIGILL)",
    "SIGFPE": "crashed with a floating-point exception (SIGFPE)",
    "SIGTERM": "was terminated (SIGTERM)",
}


@dataclass
class KernelExit:
    """How a kernel ended."""

    exitcode: int | None
    log: str = ""
    oom_killed: bool = False
    requested: bool = False  # the host killed it (restart, timeout, stop)
    reason: str = ""  # how it ended, where no exit status says it (a gateway's kernel)
    detected_at: float = field(default_factory=time.monotonic)

    @property
    def signal_name(self) -> str | None:
        if self.exitcode is not None and self.exitcode < 0:
            try:
                return signal.Signals(-self.exitcode).name
            except ValueError:
                return f"signal {-self.exitcode}"
        return None

    def describe(self) -> str:
        if self.reason:
            return self.reason
        if self.oom_killed:
            return "was killed by the out-of-memory killer (its memory limit was reached)"
        name = self.signal_name
        if name is not None:
            return _SIGNAL_WORDS.get(name, f"was killed by {name}")
        if self.exitcode is None:
            return "exited"
        return f"exited with status {self.exitcode}"

    def fatal_lines(self, limit: int = 6) -> str:
        """The kernel's last stderr lines when they say why it died (faulthandler etc.)."""
        lines = [ln for ln in self.log.splitlines() if ln.strip()]
        keep = [ln for ln in lines if "Fatal Python error" in ln or "Error" in ln]
        return "\n".join((keep or [])[-limit:])


class KernelProcess:
    """One launched kernel: its launcher's Popen, the kernel's pid, an exit future."""

    def __init__(self, plan: LaunchPlan, env: dict[str, str], log_path: str) -> None:
        self.plan = plan
        self.env = env
        self.log_path = log_path
        self.proc: subprocess.Popen[bytes] | None = None
        self.kernel_pid: int | None = None
        self.exited: asyncio.Future[KernelExit] | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self._pidfd: int | None = None
        self._requested = False
        self._buffer = b""
        self.on_exit: Callable[[KernelExit], None] | None = None

    # -- launch ---------------------------------------------------------------------------
    def launch(self, loop: asyncio.AbstractEventLoop, timeout: float = 10.0) -> None:
        """Start the launcher and wait for the kernel's pid (blocking, short)."""
        self._loop = loop
        self.exited = loop.create_future()
        log = open_log(self.log_path)  # never through a symlink the kernel planted
        try:
            self.proc = subprocess.Popen(
                [sys.executable, LAUNCHER, json.dumps(self.plan.to_json())],
                stdin=subprocess.DEVNULL,
                stdout=subprocess.PIPE,
                stderr=log,
                env=self.env,
                cwd=self.plan.cwd,
                start_new_session=True,
                close_fds=True,
            )
        finally:
            os.close(log)
        assert self.proc.stdout is not None
        fd = self.proc.stdout.fileno()
        os.set_blocking(fd, False)
        deadline = time.monotonic() + timeout
        while self.kernel_pid is None:
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                self.proc.kill()
                raise KernelLaunchError("the kernel launcher did not report a pid in time")
            ready, _, _ = select.select([fd], [], [], remaining)
            if not ready:
                continue
            chunk = os.read(fd, 65536)
            if not chunk:
                self.proc.wait()
                raise KernelLaunchError(
                    "the kernel launcher exited at once: " + self._launcher_log().strip()
                )
            for event in self._events(chunk):
                if event.get("event") == "started":
                    self.kernel_pid = int(event["kernel_pid"])
        self._watch()

    def _events(self, chunk: bytes) -> list[dict[str, Any]]:
        self._buffer += chunk
        *lines, self._buffer = self._buffer.split(b"\n")
        events = []
        for line in lines:
            try:
                events.append(json.loads(line))
            except ValueError:
                continue
        return events

    def _launcher_log(self) -> str:
        return read_tail(self.log_path)

    # -- watching ---------------------------------------------------------------------------
    def _watch(self) -> None:
        assert self.proc is not None and self._loop is not None
        try:
            self._pidfd = os.pidfd_open(self.proc.pid)
        except (AttributeError, OSError):
            self._pidfd = None
        if self._pidfd is not None:
            self._loop.add_reader(self._pidfd, self._launcher_gone)
            return
        loop = self._loop
        proc = self.proc

        def wait() -> None:
            proc.wait()
            loop.call_soon_threadsafe(self._launcher_gone)

        threading.Thread(target=wait, name="cave-kernel-watch", daemon=True).start()

    def _launcher_gone(self) -> None:
        assert self.proc is not None and self._loop is not None
        if self._pidfd is not None:
            self._loop.remove_reader(self._pidfd)
            os.close(self._pidfd)
            self._pidfd = None
        self.proc.wait()
        events: list[dict[str, Any]] = []
        assert self.proc.stdout is not None
        try:
            while True:
                chunk = os.read(self.proc.stdout.fileno(), 65536)
                if not chunk:
                    break
                events += self._events(chunk)
        except (BlockingIOError, OSError):
            pass
        self.proc.stdout.close()
        exited = next((e for e in events if e.get("event") == "exited"), {})
        exitcode = exited.get("exitcode")
        if not exited:  # the launcher itself died (killed with the kernel group?)
            exitcode = self.proc.returncode
        oom = bool(exited.get("oom_kills"))
        memory_cg = self.plan.cgroups.get("memory")
        if memory_cg and not exited:  # the launcher did not get to report (or remove) it
            oom = cgroup_oom_kills(memory_cg) > 0
        for directory in self.plan.cgroups.values():
            remove_cgroup(directory)
        info = KernelExit(
            exitcode=exitcode,
            log=str(exited.get("log", "")) or self._launcher_log(),
            oom_killed=oom and not self._requested,
            requested=self._requested,
        )
        if self.exited is not None and not self.exited.done():
            self.exited.set_result(info)
        if self.on_exit is not None:
            self.on_exit(info)

    @property
    def alive(self) -> bool:
        return self.exited is not None and not self.exited.done()

    # -- control ------------------------------------------------------------------------------
    def signal(self, signum: int) -> bool:
        """Signal the kernel's process group (the kernel and what it started)."""
        if self.kernel_pid is None or not self.alive:
            return False
        try:
            os.killpg(self.kernel_pid, signum)
        except ProcessLookupError:
            return False
        except PermissionError:
            os.kill(self.kernel_pid, signum)
        return True

    def request_kill(self) -> bool:
        """SIGKILL the kernel's group now, without waiting; its exit is reported as requested
        (the host's own act, never mistaken for a crash or the out-of-memory killer)."""
        self._requested = True
        return self.signal(signal.SIGKILL)

    async def kill(self, timeout: float = 5.0) -> KernelExit | None:
        """Kill the kernel's group; the launcher then kills the rest and exits."""
        if self.exited is None:
            return None
        self._requested = True
        if self.alive:
            self.signal(signal.SIGKILL)
            try:
                return await asyncio.wait_for(asyncio.shield(self.exited), timeout)
            except TimeoutError:
                if self.proc is not None and self.proc.poll() is None:
                    self.proc.terminate()  # SIGTERM: the launcher kills its kernel and exits
                    try:
                        return await asyncio.wait_for(asyncio.shield(self.exited), 2.0)
                    except TimeoutError:
                        self.proc.kill()
                return await asyncio.wait_for(asyncio.shield(self.exited), 2.0)
        return self.exited.result()

    def kill_now(self, wait: float = 3.0) -> None:
        """Synchronous last resort (interpreter exit, garbage collection).

        Waits for the launcher to reap the kernel: a launcher killed first (it dies
        with the thread that started it) would leave the kernel a zombie of PID 1."""
        self._requested = True
        if self.kernel_pid is not None:
            try:
                os.killpg(self.kernel_pid, signal.SIGKILL)
            except OSError:
                pass
        if self.proc is not None and self.proc.poll() is None:
            try:
                self.proc.wait(wait)
            except subprocess.TimeoutExpired:
                self.proc.kill()
