"""Escapes beyond test_sandbox_escapes.py, tried from a real sandboxed kernel: inherited
descriptors and the terminal, sockets that cross network namespaces (vsock, io_uring, the
host's abstract Unix sockets), the outer user's kernel keyring, writable mounts, privileges,
the host's import directories, symlinks the host's cleanup meets, sockets the host would dial
for it, and process floods. None may reach the host.

One sandboxed kernel serves the module; where bubblewrap cannot run the tests are skipped,
except under CI or CAVE_REQUIRE_SANDBOX, where that fails (see sandbox_or_fail).
"""

from __future__ import annotations

import asyncio
import os
import platform
import shutil
import socket
import sys
import tempfile
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from cave_tui.runtime.kernel import IPyKernelRuntime, SandboxUnavailable, limits, seccomp
from tests.runtime.kernel.test_sandbox_escapes import sandbox_or_fail, value

MEMORY = 1 << 30


@pytest.fixture(scope="module")
def kernel() -> Iterator[IPyKernelRuntime]:
    sandbox_or_fail()
    runtime = IPyKernelRuntime(
        sandbox=True, cell_timeout=60, interrupt_grace=1.0, memory_limit=MEMORY
    )
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


def _inodes(pid: int | str) -> set[str]:
    """The pipes and sockets a process holds (`pipe:[123]`, `socket:[456]`)."""
    found = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        try:
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
        except OSError:
            continue
        if target.startswith(("pipe:", "socket:")):
            found.add(target)
    return found


async def test_no_descriptor_or_terminal_of_the_host_is_inherited(kernel):
    outcome = await value(
        kernel,
        "import os, fcntl, termios\n"
        "fds = {}\n"
        "for fd in os.listdir('/proc/self/fd'):\n"
        "    try:\n"
        "        fds[int(fd)] = os.readlink(f'/proc/self/fd/{fd}')\n"
        "    except OSError:\n"
        "        pass\n"
        "injected = []\n"
        "for fd in fds:\n"
        "    try:\n"
        "        fcntl.ioctl(fd, termios.TIOCSTI, b'x')\n"
        "        injected.append(fd)\n"
        "    except OSError:\n"
        "        pass\n"
        "try:\n"
        "    os.open('/dev/tty', os.O_RDWR)\n"
        "    tty = 'opened'\n"
        "except OSError as exc:\n"
        "    tty = exc.errno\n"
        "seen = {}\n"
        f"for pid in [{os.getpid()}, {os.getppid()}, {kernel.kernel_pid}]:  # host, bwrap\n"
        "    try:\n"
        "        os.kill(pid, 0)\n"
        "        seen[pid] = 'exists'\n"
        "    except OSError as exc:\n"
        "        seen[pid] = type(exc).__name__\n"
        "out = {'fds': fds, 'injected': injected, 'tty': tty, 'seen': seen}\n",
    )
    assert isinstance(outcome, dict)
    assert outcome["injected"] == [] and outcome["tty"] != "opened"  # --new-session
    assert set(outcome["seen"].values()) == {"ProcessLookupError"}  # nothing of the host to signal
    kinds = {target.split(":")[0].split("[")[0] for target in outcome["fds"].values()}
    paths = {t for t in outcome["fds"].values() if t.startswith("/")}
    assert kinds <= {"pipe", "socket", "anon_inode", "/dev/null"}, outcome["fds"]
    assert paths <= {"/dev/null"}, paths  # no file of the host, no terminal
    # none of its pipes or sockets is one the host (or the launcher's report pipe) holds
    shared = _inodes("self") & set(outcome["fds"].values())
    assert not shared, shared


async def test_no_socket_family_crosses_the_network_namespace(kernel):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        name = f"\0cave-redteam-{uuid.uuid4().hex}"
        listener.bind(name)  # the host's abstract namespace (X11, D-Bus and others live there)
        listener.listen(1)
        outcome = await value(
            kernel,
            "import ctypes, errno, socket\nout = {}\n"
            "s = socket.socket(socket.AF_UNIX)\n"
            "try:\n"
            f"    s.connect({name!r})\n"
            "    out['abstract'] = 'connected'\n"
            "except OSError as exc:\n"
            "    out['abstract'] = exc.errno\n"
            "for family in (40, 31):  # AF_VSOCK (to the hypervisor), AF_BLUETOOTH\n"
            "    try:\n"
            "        socket.socket(family, socket.SOCK_STREAM).close()\n"
            "        out[family] = 'created'\n"
            "    except OSError as exc:\n"
            "        out[family] = exc.errno\n"
            "libc = ctypes.CDLL(None, use_errno=True)\n"
            "params = ctypes.create_string_buffer(120)\n"
            "out['io_uring'] = libc.syscall(425, 4, params), ctypes.get_errno()\n"
            "out['seccomp'] = [l.split()[1] for l in open('/proc/self/status')\n"
            "                  if l.startswith('Seccomp:')]\n"
            "out['interfaces'] = [n for _, n in socket.if_nameindex()]\n"
            "try:\n"
            "    socket.getaddrinfo('example.com', 80)\n"
            "    out['dns'] = 'resolved'\n"
            "except OSError as exc:\n"
            "    out['dns'] = type(exc).__name__\n",
        )
        listener.settimeout(0.2)
        with pytest.raises(TimeoutError):
            listener.accept()
    assert isinstance(outcome, dict)
    assert outcome["abstract"] == 111  # ECONNREFUSED: its own abstract namespace, empty
    assert outcome[40] == outcome[31] == 97  # EAFNOSUPPORT, by the filter
    assert outcome["io_uring"] == (-1, 38) and outcome["seccomp"] == ["2"]  # ENOSYS; filtered
    assert outcome["interfaces"] == ["lo"] and outcome["dns"] != "resolved"


async def test_nothing_outside_its_own_directories_is_writable_or_privileged(kernel):
    base = kernel.runtime_dir
    assert base is not None
    outcome = await value(
        kernel,
        "import os, stat\nout = {'rw': []}\n"
        "for line in open('/proc/self/mountinfo'):\n"
        "    fields = line.split()\n"
        "    if 'rw' in fields[5].split(','):\n"
        "        out['rw'].append(fields[4])\n"
        "status = dict(l.split(':', 1) for l in open('/proc/self/status'))\n"
        "out['caps'] = status['CapEff'].strip(), status['NoNewPrivs'].strip()\n"
        "tries = {\n"
        "    'mknod': lambda: os.mknod('/tmp/mem', stat.S_IFCHR | 0o600, os.makedev(1, 1)),\n"
        "    'sysctl': lambda: open('/proc/sys/kernel/hostname', 'w').write('x'),\n"
        "    'dev': lambda: open('/dev/planted', 'w'),\n"
        "    'etc': lambda: open('/etc/ssh/planted', 'w'),\n"
        "    'sys': lambda: os.listdir('/sys'),\n"
        "    'sysrq': lambda: open('/proc/sysrq-trigger', 'w'),\n"
        "}\n"
        "for name, attempt in tries.items():\n"
        "    try:\n"
        "        attempt()\n"
        "        out[name] = 'done'\n"
        "    except OSError as exc:\n"
        "        out[name] = type(exc).__name__\n"
        "out['host'] = [p for p in ['/run', '/var', '/home', '/mnt', '/srv', '/tmp/.X11-unix']\n"
        "               if os.path.exists(p)]  # docker, X11, D-Bus, ssh-agent sockets\n"
        "out['roots'] = sorted(os.listdir('/proc/1/root')) == sorted(os.listdir('/'))\n"
        "out['shm'] = os.statvfs('/dev/shm').f_blocks * os.statvfs('/dev/shm').f_frsize\n"
        "out['tmp'] = os.statvfs('/tmp').f_blocks * os.statvfs('/tmp').f_frsize\n",
    )
    assert isinstance(outcome, dict)
    own = {f"{base}/{name}" for name in ("home", "tmp", "run", "work")}
    # rw mounts: its own directories, its private in-memory /tmp and /dev/shm, /proc, its
    # pty instance and the harmless devices (/dev/null, …); nothing else of the host
    devices = {f"/dev/{d}" for d in ("null", "zero", "full", "random", "urandom", "tty")}
    allowed = own | devices | {"/tmp", "/dev/shm", "/proc", "/dev/pts"}
    assert set(outcome["rw"]) <= allowed, set(outcome["rw"]) - allowed
    assert outcome["caps"] == ("0000000000000000", "1")  # no capability; setuid is inert
    assert all(outcome[n] != "done" for n in ("mknod", "sysctl", "dev", "etc", "sys", "sysrq"))
    assert 0 < outcome["shm"] <= MEMORY // 2 and 0 < outcome["tmp"] <= MEMORY // 2
    assert outcome["host"] == [] and outcome["roots"] is True  # bwrap's PID 1 is inside too


async def test_the_hosts_python_cannot_be_changed(kernel):
    import cave_tui

    package = os.path.dirname(os.path.abspath(cave_tui.__file__))
    site = next(p for p in sys.path if p.endswith("site-packages") and os.path.isdir(p))
    marker = f"cave_redteam_{uuid.uuid4().hex}"
    targets = [
        f"{site}/{marker}.pth",  # run by every Python of this environment at start
        f"{package}/{marker}.py",
        f"{os.path.dirname(package)}/sitecustomize.py",
        f"{sys.prefix}/{marker}",
    ]
    outcome = await value(
        kernel,
        f"out = {{}}\nfor path in {targets!r}:\n"
        "    try:\n"
        "        open(path, 'x').write('import os')\n"
        "        out[path] = 'written'\n"
        "    except OSError as exc:\n"
        "        out[path] = type(exc).__name__\n",
    )
    assert isinstance(outcome, dict) and "written" not in outcome.values(), outcome
    for path in targets:
        assert not os.path.exists(path), path


async def test_process_floods_stop_at_the_limit(kernel):
    result = await kernel.execute(
        "import os, signal, time\nkids = []\n"
        "try:\n"
        "    for _ in range(2000):\n"
        "        pid = os.fork()\n"
        "        if pid == 0:\n"
        "            time.sleep(60)\n"
        "            os._exit(0)\n"
        "        kids.append(pid)\n"
        "    stopped = None\n"
        "except OSError as exc:\n"
        "    stopped = type(exc).__name__\n"
        "for pid in kids:\n"
        "    os.kill(pid, signal.SIGKILL)\n"
        "for pid in kids:\n"
        "    os.waitpid(pid, 0)\n"
        "out = (len(kids), stopped)\n"
    )
    assert result.success, result.error
    count, stopped = await kernel.retrieve("out")  # type: ignore[misc]
    assert count < 600 and stopped == "BlockingIOError"  # max_processes=512 by default
    assert (await kernel.execute("1 + 1")).output == "2\n"


@pytest.fixture
def project(monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """A project directory whose src/ is one of the host's import directories (in /tmp: the
    kernel's user must reach it)."""
    path = Path(tempfile.mkdtemp(prefix="cave-project-"))
    (path / "src").mkdir()
    path.chmod(0o777)
    (path / "src").chmod(0o777)  # as nobody, only the mounts keep the kernel out
    monkeypatch.setattr(sys, "path", [str(path / "src"), *sys.path])
    yield path
    shutil.rmtree(path, ignore_errors=True)


@pytest.fixture
def victim() -> Iterator[Path]:
    """A host directory with a file that the kernel's user could write (world-writable)."""
    path = Path(tempfile.mkdtemp(prefix="cave-victim-"))
    (path / "keep.txt").write_text("host data")
    path.chmod(0o777)
    yield path
    shutil.rmtree(path, ignore_errors=True)


async def test_a_working_directory_holding_import_directories(project: Path, victim: Path):
    """Given the project as its cwd, the kernel writes there but never in the host's import
    directory inside it; its planted symlinks do not lead the host's cleanup astray."""
    sandbox_or_fail()
    with pytest.raises(SandboxUnavailable, match="import directory"):
        await IPyKernelRuntime(sandbox=True, cwd=project / "src").start()
    kernel = IPyKernelRuntime(sandbox=True, cwd=project, cell_timeout=60, interrupt_grace=1.0)
    try:
        await kernel.start()
        outcome = await value(
            kernel,
            "import os\nout = {}\n"
            "for path in ['src/pandas.py', 'src/sitecustomize.py', 'notes.txt']:\n"
            "    try:\n"
            "        open(path, 'w').write('raise SystemExit')\n"
            "        out[path] = 'written'\n"
            "    except OSError as exc:\n"
            "        out[path] = type(exc).__name__\n"
            "for name in ['link', 'dirlink']:\n"
            "    for where in [os.environ['HOME'], os.environ['TMPDIR']]:\n"
            f"        os.symlink({str(victim)!r} + ('/keep.txt' if name == 'link' else ''),\n"
            "                   os.path.join(where, name))\n",
        )
    finally:
        await kernel.stop()  # removes its private directory, symlinks and all
    assert outcome == {
        "src/pandas.py": "OSError",  # EROFS
        "src/sitecustomize.py": "OSError",
        "notes.txt": "written",
    }
    assert sorted(os.listdir(project / "src")) == []
    assert (victim / "keep.txt").read_text() == "host data"
    assert kernel.runtime_dir is None


async def test_cave_s_own_checkout_as_working_directory_keeps_the_package_read_only(
    monkeypatch: pytest.MonkeyPatch,
):
    """Started in cave's checkout (the README's first command), the sandboxed kernel writes
    there, but not into `cave_tui`, which the host imports next, nor into its environment."""
    sandbox_or_fail()
    import cave_tui

    package = Path(cave_tui.__file__).resolve().parent
    checkout = package.parent
    monkeypatch.setattr(sys, "path", [p for p in sys.path if Path(p or ".").resolve() != checkout])
    monkeypatch.chdir("/")
    note = f"cave-redteam-{uuid.uuid4().hex[:8]}.txt"
    kernel = IPyKernelRuntime(sandbox=True, cwd=checkout, cell_timeout=60, interrupt_grace=1.0)
    try:
        await kernel.start()
        outcome = await value(
            kernel,
            "import os, sys\nout = {}\n"
            f"for path in ['cave_tui/_planted.py', 'cave_tui/agent/_planted.py', {note!r},\n"
            "             os.path.join(sys.prefix, '_planted.pth')]:\n"
            "    try:\n"
            "        open(path, 'a').write('raise SystemExit')\n"
            "        out[os.path.basename(path)] = 'written'\n"
            "    except OSError as exc:\n"
            "        out[os.path.basename(path)] = type(exc).__name__\n",
        )
    finally:
        await kernel.stop()
        (checkout / note).unlink(missing_ok=True)
    assert outcome == {
        "_planted.py": "OSError",  # both: cave_tui/ and cave_tui/agent/
        note: "written",
        "_planted.pth": "OSError",
    }
    assert not (package / "_planted.py").exists()
    assert not (package / "agent" / "_planted.py").exists()


async def test_the_host_never_dials_a_socket_the_kernel_points_it_to(kernel):
    """The kernel swaps its bound sockets (and the next boot's) for symlinks to a Unix socket
    of the host and drops its end: ZMQ would reconnect through them, as the host's user."""
    where = Path(tempfile.mkdtemp(prefix="cave-victim-"))
    where.chmod(0o755)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as victim:
        victim.bind(str(where / "victim.sock"))
        victim.listen(8)
        victim.settimeout(0.5)
        try:
            result = await kernel.execute(
                f"import gc, os, re, zmq\nvictim = {str(where / 'victim.sock')!r}\n"
                "for s in [s for s in gc.get_objects() if isinstance(s, zmq.Socket)]:\n"
                "    if s.closed:\n"
                "        continue\n"
                "    end = s.getsockopt(zmq.LAST_ENDPOINT).decode()\n"
                "    found = re.fullmatch(r'ipc://(.*/k)(\\d+)-(4)', end)\n"
                "    if found:\n"
                "        stem, boot = found[1], int(found[2])\n"
                "        for port in range(1, 6):  # the next boot's, before it binds them\n"
                "            os.symlink(victim, f'{stem}{boot + 1}-{port}')\n"
                "        os.rename(end[6:], end[6:] + '.old')\n"
                "        os.symlink(victim, end[6:])\n"
                "        s.close(linger=0)  # the control socket: the host reconnects\n"
                "        print('swapped')\n"
            )
            assert result.success and "swapped" in result.output, result.error
            with pytest.raises(TimeoutError):
                victim.accept()
            await kernel.restart()  # boots on the planted names
            assert (await kernel.execute("1 + 1")).output == "2\n"
            with pytest.raises(TimeoutError):
                victim.accept()
        finally:
            shutil.rmtree(where, ignore_errors=True)


def _as_kernel_user(syscall: int, *args: object) -> int:
    """One system call made as the kernel's user outside its sandbox (`nobody` under a root
    host, else this user), in a forked child; its result."""
    import ctypes

    user = limits.resolve_user("auto")
    read_end, write_end = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        try:
            if user is not None:
                os.setgroups([])
                os.setgid(user.gid)
                os.setuid(user.uid)
            libc = ctypes.CDLL(None, use_errno=True)
            os.write(write_end, str(libc.syscall(syscall, *args)).encode())
        finally:
            os._exit(0)
    os.close(write_end)
    with os.fdopen(read_end) as fh:
        said = fh.read()
    os.waitpid(pid, 0)
    return int(said or "-1")


async def test_the_outer_users_kernel_keyring_is_out_of_reach(kernel):
    """Keyrings are not namespaced: the outer user's keyring could be linked and read."""
    arch = seccomp.ARCHES.get(platform.machine())
    if arch is None:
        pytest.skip("no system call numbers for this machine")
    _, add_key, _, keyctl = arch.refused
    secret = f"cave-{uuid.uuid4().hex}"
    key = _as_kernel_user(add_key, b"user", b"cave-redteam", secret.encode(), len(secret), -4)
    assert key > 0  # a key of the kernel's outer user, in its user keyring
    try:
        outcome = await value(
            kernel,
            "import ctypes, os\nlibc = ctypes.CDLL(None, use_errno=True)\nout = []\n"
            "ids = [int(line.split()[0], 16) for line in open('/proc/keys')]\n"
            "for kid in ids:\n"
            f"    libc.syscall({keyctl}, 8, kid, ctypes.c_int(-3))  # link into its session\n"
            "    buf = ctypes.create_string_buffer(200)\n"
            f"    n = libc.syscall({keyctl}, 11, kid, buf, 200)  # read\n"
            "    out.append((n, ctypes.get_errno(), buf.raw[: max(n, 0)].hex()))\n"
            f"out.append(libc.syscall({keyctl}, 0, ctypes.c_int(-4), 0))\n"
            "out.append(ctypes.get_errno())\n",
        )
    finally:
        _as_kernel_user(keyctl, 21, key)  # KEYCTL_INVALIDATE
    assert secret not in str(outcome) and secret.encode().hex() not in str(outcome)
    assert isinstance(outcome, list) and outcome[-2:] == [-1, 38]  # keyctl: ENOSYS
