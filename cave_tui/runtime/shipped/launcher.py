"""The kernel's launcher process (standard library only; run as a script by the host).

    python launcher.py '<LaunchPlan as JSON>'

It sits between the host and ipykernel so that killing a kernel is clean and
complete:

* it is a child *subreaper*: whatever the kernel forks ends up its child when
  orphaned, so it can kill and reap all of it (no zombies left to PID 1, which
  may never reap them and would keep counting them against a process limit);
* it forks the kernel into its own session (the kernel's process group is what
  the host signals), moves it into its cgroups, applies rlimits, and, when the
  host is root, gives it a private mount namespace (paths it must still reach,
  a /proc that hides other users' processes) before dropping to the kernel user;
* it reports on stdout, one JSON line each: the kernel's pid once forked, and its
  wait status once it is gone and everything it started has been killed, with
  the last few KB the kernel wrote to its own stdout/stderr (where a fatal error
  such as "Segmentation fault" is printed), kept in a bounded buffer here.

When the host dies the launcher gets SIGTERM (PR_SET_PDEATHSIG) and still kills and
reaps the kernel; the kernel gets SIGKILL if the launcher itself dies.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import json
import os
import resource
import signal
import sys
import threading
import time
from collections import deque
from typing import Any

PR_SET_PDEATHSIG = 1
PR_SET_CHILD_SUBREAPER = 36
CLONE_NEWNS = 0x00020000
CLONE_NEWNET = 0x40000000
SIOCGIFFLAGS, SIOCSIFFLAGS, IFF_UP = 0x8913, 0x8914, 0x1
MS_NOSUID, MS_NODEV, MS_NOEXEC = 2, 4, 8
MS_BIND, MS_REC, MS_PRIVATE = 4096, 16384, 1 << 18
CLEANUP_SECONDS = 5.0
LOG_TAIL_BYTES = 16 * 1024


def _libc() -> Any:
    """glibc's libc.so.6 by name (`find_library` runs `ldconfig -p`, at every kernel's
    start); another C library (musl) as `find_library` finds it."""
    for name in ("libc.so.6", None):
        try:
            return ctypes.CDLL(name or ctypes.util.find_library("c"), use_errno=True)
        except (OSError, TypeError):
            continue
    return None


LIBC = _libc()


def _prctl(option: int, value: int) -> bool:
    if LIBC is None or not sys.platform.startswith("linux"):
        return False
    return LIBC.prctl(option, value, 0, 0, 0) == 0


def _check(result: int, what: str) -> None:
    if result != 0:
        err = ctypes.get_errno()
        raise OSError(err, f"{what}: {os.strerror(err)}")


def _mount(
    source: str | None, target: str, fstype: str | None, flags: int, data: str | None
) -> None:
    enc = lambda s: s.encode() if s is not None else None  # noqa: E731
    _check(
        LIBC.mount(enc(source), enc(target), enc(fstype), ctypes.c_ulong(flags), enc(data)),
        f"mount {target}",
    )


def _isolate_mounts(expose: dict[str, list[str]], hide_proc: bool) -> None:
    """A private mount namespace: blocked ancestors replaced by a tmpfs that holds
    only the children the kernel needs (bind-mounted from the real ones), and a
    /proc where other users' processes are invisible."""
    _check(LIBC.unshare(CLONE_NEWNS), "unshare(CLONE_NEWNS)")
    _mount(None, "/", None, MS_REC | MS_PRIVATE, None)
    for ancestor, children in sorted(expose.items(), key=lambda kv: kv[0].count("/")):
        fds = {c: os.open(os.path.join(ancestor, c), os.O_PATH) for c in children}
        _mount("tmpfs", ancestor, "tmpfs", MS_NOSUID | MS_NODEV, "mode=755,size=64k")
        for child, fd in fds.items():
            target = os.path.join(ancestor, child)
            if os.path.isdir(f"/proc/self/fd/{fd}"):
                os.mkdir(target)
            else:
                with open(target, "w"):
                    pass
            _mount(f"/proc/self/fd/{fd}", target, None, MS_BIND | MS_REC, None)
            os.close(fd)
    if hide_proc:
        try:
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=invisible")
        except OSError:
            _mount("proc", "/proc", "proc", MS_NOSUID | MS_NODEV | MS_NOEXEC, "hidepid=2")


def _private_network() -> None:
    """A network namespace of the kernel's own holding only its loopback, brought up: it
    reaches neither the host's `127.0.0.1` nor any network, nor can it listen where the host
    looks (the host reaches it over Unix sockets, which need no network)."""
    import fcntl
    import socket
    import struct

    _check(LIBC.unshare(CLONE_NEWNET), "unshare(CLONE_NEWNET)")
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as sock:
        request = struct.pack("16sH22x", b"lo", 0)
        flags = struct.unpack("16sH22x", fcntl.ioctl(sock, SIOCGIFFLAGS, request))[1]
        fcntl.ioctl(sock, SIOCSIFFLAGS, struct.pack("16sH22x", b"lo", flags | IFF_UP))


def _tasks_of(uid: int) -> int:
    """Threads owned by *uid* (what RLIMIT_NPROC counts)."""
    total = 0
    try:
        names = os.listdir("/proc")
    except OSError:
        return 0
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/status") as fh:
                status = fh.read()
        except OSError:
            continue
        fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
        try:
            if int(fields.get("Uid", "-1").split()[0]) == uid:
                total += int(fields.get("Threads", "1"))
        except ValueError:
            continue
    return total


def _hand_over(data: bytes, fd: int) -> None:
    """*data* readable on descriptor *fd* (inherited across exec): a pipe holding it."""
    read_end, write_end = os.pipe()
    os.write(write_end, data)  # a few hundred bytes: within any pipe's buffer
    os.close(write_end)
    if read_end != fd:
        os.dup2(read_end, fd)
        os.close(read_end)
    os.set_inheritable(fd, True)


def _become_kernel(plan: dict[str, Any], log_fd: int) -> None:
    """Runs in the forked child; ends in exec (or _exit on failure)."""
    try:
        os.setsid()
        os.dup2(log_fd, 1)
        os.dup2(log_fd, 2)
        os.close(log_fd)
        if plan.get("seccomp_fd") is not None:  # bwrap --seccomp reads the filter there
            _hand_over(bytes.fromhex(plan["seccomp_program"]), int(plan["seccomp_fd"]))
        for directory in plan["cgroups"].values():
            with open(os.path.join(directory, "cgroup.procs"), "w") as fh:
                fh.write(str(os.getpid()))
        uid, gid = plan["uid"], plan["gid"]
        if plan.get("private_net"):
            _private_network()
        if plan["expose"] or plan["hide_proc"]:
            _isolate_mounts(plan["expose"], plan["hide_proc"])
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
        if plan["memory_limit"]:  # private writable memory: what data and heaps take
            limit = int(plan["memory_limit"])
            resource.setrlimit(resource.RLIMIT_DATA, (limit, limit))
        if plan.get("address_space_limit"):  # a backstop for what RLIMIT_DATA leaves out
            space = int(plan["address_space_limit"])
            resource.setrlimit(resource.RLIMIT_AS, (space, space))
        if plan["max_processes"] and "pids" not in plan["cgroups"]:
            owner = uid if uid is not None else os.getuid()
            if owner != 0:  # root ignores RLIMIT_NPROC; the pids cgroup is its limit
                nproc = _tasks_of(owner) + int(plan["max_processes"])
                resource.setrlimit(resource.RLIMIT_NPROC, (nproc, nproc))
        os.chdir(plan["cwd"])
        if uid is not None:
            os.setgroups([])
            os.setgid(gid)
            os.setuid(uid)
        _prctl(PR_SET_PDEATHSIG, signal.SIGKILL)
        argv = plan["argv"]
        os.execve(argv[0], argv, dict(os.environ))
    except BaseException as exc:  # report why, then fail the launch
        try:
            os.write(2, f"cave kernel launcher: {type(exc).__name__}: {exc}\n".encode())
        finally:
            os._exit(70)


def _children() -> list[int]:
    me = str(os.getpid())
    found: list[int] = []
    try:
        names = os.listdir("/proc")
    except OSError:  # no procfs (macOS): the process group kill is all there is
        return found
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(")") + 2 :].split()
        if len(fields) > 1 and fields[1] == me:
            found.append(int(name))
    return found


def _kill(pid: int, sig: int = signal.SIGKILL) -> None:
    try:
        os.kill(pid, sig)
    except OSError:
        pass


def _clean_up(kernel_pid: int, cgroups: dict[str, str]) -> None:
    """Kill and reap everything the kernel left behind."""
    try:
        os.killpg(kernel_pid, signal.SIGKILL)
    except OSError:
        pass
    deadline = time.monotonic() + CLEANUP_SECONDS
    while time.monotonic() < deadline:
        for directory in cgroups.values():
            try:
                with open(os.path.join(directory, "cgroup.procs")) as fh:
                    for entry in fh.read().split():
                        _kill(int(entry))
            except OSError:
                pass
        for pid in _children():
            _kill(pid)
        try:
            while True:
                pid, _ = os.waitpid(-1, os.WNOHANG)
                if pid == 0:
                    break
        except ChildProcessError:
            return
        time.sleep(0.01)


class LogTail:
    """Reads the kernel's stdout/stderr pipe, keeping only the last few KB."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.chunks: deque[bytes] = deque()
        self.size = 0
        self.thread = threading.Thread(target=self._run, daemon=True)
        self.thread.start()

    def _run(self) -> None:
        while True:
            try:
                data = os.read(self.fd, 65536)
            except OSError:
                return
            if not data:
                return
            self.chunks.append(data)
            self.size += len(data)
            while self.chunks and self.size - len(self.chunks[0]) >= LOG_TAIL_BYTES:
                self.size -= len(self.chunks.popleft())

    def text(self, wait: float = 0.2) -> str:
        self.thread.join(wait)
        data = b"".join(self.chunks)[-LOG_TAIL_BYTES:]
        return data.decode("utf-8", errors="replace")


def _oom_kills(directory: str | None) -> int:
    if not directory:
        return 0
    try:
        with open(os.path.join(directory, "memory.oom_control")) as fh:
            for line in fh:
                key, _, value = line.partition(" ")
                if key == "oom_kill":
                    return int(value)
    except (OSError, ValueError):
        pass
    return 0


def _emit(event: dict[str, Any]) -> None:
    try:
        os.write(1, (json.dumps(event) + "\n").encode())
    except OSError:
        pass  # the host is gone; the cleanup still happened


def main(argv: list[str]) -> None:
    if argv[1:] == ["--probe-net"]:  # can this host give a kernel its own network? (exit 0)
        _private_network()
        os._exit(0)
    plan = json.loads(argv[1])
    kernel: dict[str, Any] = {"pid": None, "stop": False}

    def stop(signum: int, frame: Any) -> None:
        # The host asked, or died (PR_SET_PDEATHSIG): kill the kernel, then reap and exit.
        kernel["stop"] = True
        if kernel["pid"] is not None:
            try:
                os.killpg(kernel["pid"], signal.SIGKILL)
            except OSError:
                _kill(kernel["pid"])

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    parent = os.getppid()
    _prctl(PR_SET_CHILD_SUBREAPER, 1)
    _prctl(PR_SET_PDEATHSIG, signal.SIGTERM)
    if os.getppid() != parent:
        os._exit(1)
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:
        signal.signal(signal.SIGTERM, signal.SIG_DFL)
        signal.signal(signal.SIGINT, signal.SIG_DFL)
        os.close(read_fd)
        _become_kernel(plan, write_fd)
    os.close(write_fd)
    log = LogTail(read_fd)
    kernel["pid"] = pid
    if kernel["stop"]:
        stop(signal.SIGTERM, None)
    _emit({"event": "started", "kernel_pid": pid})
    status = None
    while status is None:
        try:
            done, wait_status = os.wait()
        except ChildProcessError:
            break
        if done == pid:
            status = wait_status
    _clean_up(pid, plan["cgroups"])
    event: dict[str, Any] = {
        "event": "exited",
        "status": status,
        "log": log.text(),
        "oom_kills": _oom_kills(plan["cgroups"].get("memory")),
    }
    for directory in plan["cgroups"].values():  # empty now; gone even if the host is
        try:
            os.rmdir(directory)
        except OSError:
            pass
    if status is not None:
        event["exitcode"] = os.waitstatus_to_exitcode(status)
    _emit(event)
    runtime_dir = plan.get("runtime_dir") or ""
    if os.getppid() != parent and os.path.basename(runtime_dir).startswith("cave-kernel-"):
        import shutil  # the host died: nobody else will remove its private directory

        shutil.rmtree(runtime_dir, ignore_errors=True)
    os._exit(0)


if __name__ == "__main__":
    main(sys.argv)
