"""The kernel's OS sandbox: the bubblewrap (`bwrap`) command line an owned kernel runs under.

`SandboxPlan` says what the kernel may see and do; `bwrap_argv` turns it into the command
the launcher execs (so `cave sandbox --show` prints exactly what runs). `require_bwrap`
checks once per user that bubblewrap and user namespaces work here, and raises
`SandboxUnavailable` otherwise: a sandboxed kernel never silently runs unsandboxed.
"""

from __future__ import annotations

import os
import secrets
import shlex
import shutil
import subprocess
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache

from cave_tui.runtime.kernel.errors import SandboxUnavailable
from cave_tui.runtime.kernel.limits import KernelUser, needed_paths
from cave_tui.runtime.kernel.seccomp import SECCOMP_FD, program_for

# System directories the kernel reads (never writes): programs, libraries, configuration.
SYSTEM_PATHS = ("/usr", "/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32", "/etc")
# Inside /etc: what holds secrets is hidden (an empty file or directory mounted over it).
SECRET_FILES = ("/etc/shadow", "/etc/gshadow", "/etc/shadow-", "/etc/gshadow-")
SECRET_DIRS = ("/etc/ssl/private", "/etc/ssh")
NAMESPACES = ("--unshare-user", "--unshare-pid", "--unshare-ipc", "--unshare-uts")
PROBE_TIMEOUT = 10.0
UID_RANGE = (20_000, 60_000)  # a kernel's uid inside its user namespace: random, per kernel


@dataclass(frozen=True)
class SandboxPlan:
    """What one sandboxed kernel sees: everything not listed here does not exist for it."""

    bwrap: str  # the bwrap executable
    workdir: str  # read-write, and the kernel's working directory
    writable: tuple[str, ...]  # the kernel's own directories (home, tmp, sockets)
    readable: tuple[str, ...]  # the Python environment and import directories
    files: tuple[str, ...] = ()  # single files bound read-only (the connection file)
    mounts: tuple[tuple[str, bool], ...] = ()  # the user's (path, read-only), at the same path
    env: dict[str, str] = field(default_factory=dict)  # the whole environment it starts with
    uid: int = 0  # inside its user namespace (unique per kernel)
    allow_net: bool = False  # share the host's network (else only its own loopback)
    tmpfs_size: int | None = None  # bytes each of its private /tmp and /dev/shm may hold
    seccomp: bytes | None = None  # the filter program (seccomp.py), handed over on SECCOMP_FD
    system: tuple[str, ...] = SYSTEM_PATHS
    hostname: str = "cave-kernel"


def kernel_plan(
    runtime_dir: str,
    workdir: str,
    connection_file: str,
    env: dict[str, str],
    *,
    user: KernelUser | None,
    uid: int,
    allow_net: bool,
    tmpfs_size: int | None = None,
    mounts: Iterable[tuple[str, bool]] = (),
) -> SandboxPlan:
    """The plan of an owned kernel with private directory *runtime_dir* (see hostfiles.py):
    its home, tmp and sockets writable, its connection file read-only, nothing else of it;
    plus the user's *mounts* (`--mount`: host paths, read-only when said).

    Raises SandboxUnavailable when *workdir* cannot be the kernel's (`check_workdir`)."""
    readable = tuple(python_paths())
    check_workdir(workdir)
    mounts = tuple(mounts)
    check_mounts(mounts)
    return SandboxPlan(
        bwrap=require_bwrap(user),
        workdir=workdir,
        writable=tuple(os.path.join(runtime_dir, name) for name in ("home", "tmp", "run")),
        readable=readable,
        files=(connection_file,),
        mounts=mounts,
        env=env,
        uid=uid,
        allow_net=allow_net,
        tmpfs_size=tmpfs_size,
        seccomp=program_for(),
    )


def check_workdir(workdir: str) -> None:
    """Raises SandboxUnavailable when *workdir* is `/`, a system directory, the temporary
    folder (every kernel's private folder is there), or one of the host's import directories:
    the sandboxed kernel may write its working folder, and could plant modules there that the
    host imports next."""
    work = os.path.realpath(workdir)
    whole = ("/", *SYSTEM_PATHS)
    if work in whole or any(_under(work, [top]) for top in ("/proc", "/dev", "/sys")):
        raise SandboxUnavailable(
            f"cannot sandbox the kernel in {workdir}: the kernel may write its working folder, "
            "and this one is the host's own; start cave in a folder of its own, or pass "
            "--workdir DIR"
        )
    if _under(os.path.realpath(tempfile.gettempdir()), [work]):
        raise SandboxUnavailable(
            f"cannot sandbox the kernel in {workdir}: it holds the private folders of every "
            "kernel (and other users' temporary files); start cave in a folder of its own, or "
            "pass --workdir DIR"
        )
    if any(os.path.realpath(path) == work for path in python_paths()):
        raise SandboxUnavailable(
            f"cannot sandbox the kernel in {workdir}: it is an import directory of this "
            "process (on sys.path), which the kernel may not write; start cave in another "
            "folder, or pass --workdir DIR"
        )


def check_mounts(mounts: Iterable[tuple[str, bool]]) -> None:
    """Raises SandboxUnavailable for a read-write mount inside one of the host's import
    directories (the kernel could plant modules the host imports next); read-only is fine."""
    imports = python_paths()
    for path, read_only in mounts:
        real = os.path.realpath(path)
        inside = [p for p in imports if _under(real, [os.path.realpath(p)])]
        if inside and not read_only:
            raise SandboxUnavailable(
                f"cannot mount {path} read-write in the sandbox: it is inside {inside[0]}, an "
                f"import directory of this process; mount it read-only ({path}:ro)"
            )


def new_uid() -> int:
    """A random uid (and gid) for one kernel inside its user namespace."""
    low, high = UID_RANGE
    return low + secrets.randbelow(high - low)


def bwrap_argv(plan: SandboxPlan) -> list[str]:
    """The bwrap command line for *plan*, ending in `--` (the kernel's own argv follows)."""
    argv = [plan.bwrap, *NAMESPACES, "--unshare-cgroup-try"]
    if not plan.allow_net:
        argv.append("--unshare-net")
    argv += ["--disable-userns", "--die-with-parent", "--new-session"]
    argv += ["--uid", str(plan.uid), "--gid", str(plan.uid), "--hostname", plan.hostname]
    # private /proc, /dev (read-only but for its own /dev/shm) and /tmp, in memory of a size
    argv += ["--proc", "/proc", "--dev", "/dev"]
    argv += [*_sized(plan), "--tmpfs", "/dev/shm", "--remount-ro", "/dev"]
    argv += [*_sized(plan), "--tmpfs", "/tmp"]
    for path in plan.system:
        if os.path.islink(path):  # merged /usr: /bin -> usr/bin
            argv += ["--symlink", os.readlink(path), path]
        else:
            argv += ["--ro-bind-try", path, path]
    argv += _binds(plan)
    argv += _home_dotfiles(plan)
    for path in SECRET_FILES:  # after every bind: hidden whatever the user mounted
        if os.path.exists(path):
            argv += ["--ro-bind", "/dev/null", path]
    for path in SECRET_DIRS:
        if os.path.isdir(path):
            argv += ["--size", "4096", "--tmpfs", path, "--remount-ro", path]
    for path in plan.files:
        argv += ["--ro-bind", path, path]
    argv += ["--remount-ro", "/", "--chdir", plan.workdir, "--clearenv"]
    if plan.seccomp is not None:
        argv += ["--seccomp", str(SECCOMP_FD)]
    for key, value in sorted(plan.env.items()):
        argv += ["--setenv", key, value]
    return [*argv, "--"]


def _sized(plan: SandboxPlan) -> list[str]:
    return ["--size", str(plan.tmpfs_size)] if plan.tmpfs_size else []


def _home_dotfiles(plan: SandboxPlan) -> list[str]:
    """The host user's dotfiles and dot-folders (shell start-up files, ~/.config with cave's
    own config.toml, ~/.ssh, ~/.local) read-only, when the home is inside a writable bind (cave
    started in ~ or an ancestor of it): the kernel could otherwise change what the host runs
    or how cave starts next. Symlinks and names that do not exist yet are not covered."""
    home = os.path.realpath(os.path.expanduser("~"))
    writable = [*plan.writable, plan.workdir, *(p for p, ro in plan.mounts if not ro)]
    for path in sorted(writable, key=len):
        real = os.path.realpath(path)
        if not _under(home, [real]):
            continue
        inside = os.path.join(os.path.abspath(path), os.path.relpath(home, real))
        try:
            names = sorted(name for name in os.listdir(home) if name.startswith("."))
        except OSError:
            return []
        argv: list[str] = []
        for name in names:
            if not os.path.islink(os.path.join(home, name)):
                target = os.path.normpath(os.path.join(inside, name))
                argv += ["--ro-bind", target, target]
        return argv
    return []


def _binds(plan: SandboxPlan) -> list[str]:
    """The import directories read-only, the kernel's own directories and the user's mounts
    (`plan.mounts`) as said, outermost first, so that an import directory inside a writable
    one (a project's `src/` under the working directory) is still read-only, and a read-only
    mount inside the working directory too: a later mount covers an earlier one."""
    rw = [os.path.abspath(path) for path in (*plan.writable, plan.workdir)]
    rw += [path for path, read_only in plan.mounts if not read_only]
    readable = [p for p in plan.readable if not _under(p, plan.system)]
    ro = _outermost(readable)
    # one nested in another import directory is bound again when a writable one lies between
    ro += [p for p in _outermost(p for p in plan.readable if _under(p, rw)) if p not in ro]
    ro += [path for path, read_only in plan.mounts if read_only]
    mounts = [(path, "--ro-bind") for path in ro] + [(path, "--bind") for path in rw]
    argv: list[str] = []
    for path, option in sorted(mounts, key=lambda m: (m[0].count("/"), m[1] == "--ro-bind")):
        argv += [option, path, path]
    return argv


def inner_pid(outer: int, bwrap: str) -> int | None:
    """The process bwrap *outer* started for its command (the kernel): its oldest
    descendant that is not bwrap itself (bwrap runs as pid 1 of its PID namespace and
    holds no cell's memory); None before it is started, or when *outer* is gone."""
    import psutil

    try:
        children = psutil.Process(outer).children(recursive=True)
    except (psutil.Error, OSError):
        return None
    own = os.path.realpath(bwrap)
    found: list[tuple[float, int]] = []
    for child in children:
        try:
            if child.exe() != own:
                found.append((child.create_time(), child.pid))
        except (psutil.Error, OSError):
            continue  # gone meanwhile, or not ours to read
    return min(found)[1] if found else None


def describe(argv: list[str]) -> str:
    """*argv* for people: one option and its arguments per line, shell-quoted."""
    lines: list[list[str]] = [[argv[0]]]
    for arg in argv[1:]:
        if arg.startswith("--"):
            lines.append([arg])
        else:
            lines[-1].append(arg)
    return " \\\n  ".join(shlex.join(words) for words in lines)


def python_paths() -> list[str]:
    """What the kernel reads besides the system: the interpreter, its environment, and the
    host's import directories (functions injected by reference are imported from them);
    never `/`, nor the host user's home or one of its ancestors (its secrets live there)."""
    home = os.path.realpath(os.path.expanduser("~"))
    return [p for p in needed_paths() if p != "/" and not _under(home, [p])]


def _under(path: str, roots: Iterable[str]) -> bool:
    return any(path == root or path.startswith(root.rstrip("/") + "/") for root in roots)


def _outermost(paths: Iterable[str]) -> list[str]:
    """*paths* without those inside another one (bound once, through the outer one)."""
    out: list[str] = []
    for path in sorted({os.path.abspath(p) for p in paths}, key=len):
        if not _under(path, out):
            out.append(path)
    return sorted(out)


# -- can it run here? -------------------------------------------------------------------


def find_bwrap() -> str | None:
    """The bwrap executable on PATH (None when bubblewrap is not installed)."""
    return shutil.which("bwrap")


def require_bwrap(user: KernelUser | None) -> str:
    """The bwrap path, after checking (once per user) that it can make a sandbox here.

    Raises SandboxUnavailable with a one-line reason otherwise."""
    path = find_bwrap()
    if path is None:
        raise SandboxUnavailable(
            "cannot sandbox the kernel: bubblewrap (bwrap) is not installed "
            "(Debian/Ubuntu: apt-get install bubblewrap)"
        )
    uid = user.uid if user is not None else None
    gid = user.gid if user is not None else None
    reason = probe(path, uid, gid)
    if reason is not None:
        raise SandboxUnavailable(f"cannot sandbox the kernel: {reason}")
    return path


@cache
def probe(bwrap: str, uid: int | None, gid: int | None) -> str | None:
    """Run `bwrap … true` once with the namespaces a kernel gets; None when it works, else
    why not (user namespaces off, a seccomp filter, …)."""
    argv = [bwrap, *NAMESPACES, "--unshare-net", "--die-with-parent", "--ro-bind", "/", "/"]
    argv += ["--proc", "/proc", "--dev", "/dev", "--", "true"]
    try:
        done = subprocess.run(
            argv,
            capture_output=True,
            timeout=PROBE_TIMEOUT,
            cwd="/",
            env={"PATH": os.environ.get("PATH", os.defpath)},
            check=False,
            user=uid,
            group=gid,
            extra_groups=[] if uid is not None else None,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        return f"bwrap could not run ({type(exc).__name__}: {exc})"
    if done.returncode == 0:
        return None
    said = done.stderr.decode(errors="replace").strip().splitlines()
    detail = said[-1] if said else f"exit status {done.returncode}"
    return f"bwrap cannot create user namespaces here ({detail}); {userns_fix()}"


# sysctl files that turn unprivileged user namespaces off, and the value that turns them on
USERNS_SWITCHES = (
    ("/proc/sys/kernel/unprivileged_userns_clone", "0", "1"),  # Debian's
    ("/proc/sys/user/max_user_namespaces", "0", "15000"),
    ("/proc/sys/kernel/apparmor_restrict_unprivileged_userns", "1", "0"),  # Ubuntu 23.10+
)


def userns_fix() -> str:
    """How to allow unprivileged user namespaces here: the sysctl that turns them off, when
    one does, else what else stops them (a container's seccomp profile)."""
    for path, off, on in USERNS_SWITCHES:
        try:
            with open(path) as fh:
                value = fh.read().strip()
        except OSError:
            continue
        if value == off:
            name = path.removeprefix("/proc/sys/").replace("/", ".")
            return f"allow them: sudo sysctl -w {name}={on}"
    return "allow unprivileged user namespaces (in a container: a seccomp profile that allows them)"
