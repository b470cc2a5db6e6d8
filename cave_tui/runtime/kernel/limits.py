"""Limits and isolation for the kernel process, computed in the host.

Everything here is plain data that the launcher (`launcher.py`) applies in the
kernel process before it becomes ipykernel: the environment it sees (an allow-list,
so secrets never reach it), the user it runs as (an unprivileged one when the host
is root), the paths that user must still reach (the interpreter may live under a
0700 home such as /root), memory and process limits, and per-kernel cgroups where
the host may create them.
"""

from __future__ import annotations

import os
import pwd
import re
import stat
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from cave_tui.runtime.memory import parse_size  # noqa: F401 (kept importable from here)

# Environment variables a kernel may inherit. Everything else is dropped: an
# allow-list, because a secret can hide under any name (DATABASE_URL, ...).
SAFE_ENV_NAMES = frozenset(
    {
        "PATH", "LANG", "LANGUAGE", "TZ", "TERM", "COLUMNS", "LINES", "NO_COLOR",
        "PYTHONPATH", "PYTHONHASHSEED", "PYTHONUTF8", "PYTHONIOENCODING",
        "PYTHONDONTWRITEBYTECODE", "VIRTUAL_ENV", "CONDA_PREFIX", "CONDA_DEFAULT_ENV",
        "OMP_NUM_THREADS", "MKL_NUM_THREADS", "OPENBLAS_NUM_THREADS", "NUMEXPR_MAX_THREADS",
        "SOURCE_DATE_EPOCH",
    }
)  # fmt: skip
SAFE_ENV_PREFIXES = ("LC_",)
# Never passed on, even when listed as safe or given in `env=` by mistake.
SECRET_NAME = re.compile(
    r"(API_?KEY|TOKEN|SECRET|PASSW(OR)?D|CREDENTIAL|PRIVATE_KEY|AUTH|COOKIE|SESSION"
    r"|^AWS_|^AZURE_|^GCP_|^GOOGLE_APPLICATION|^SSH_AUTH_SOCK$|^OPENAI_|^ANTHROPIC_"
    r"|^LITELLM_|^HF_|^HUGGING|^GITHUB_|^GH_|^CAVE_)",
    re.IGNORECASE,
)


def is_secret_name(name: str) -> bool:
    return bool(SECRET_NAME.search(name))


def kernel_environment(
    base: dict[str, str] | os._Environ[str] | None = None,
    extra: dict[str, str] | None = None,
    *,
    home: str,
    tmp: str,
    user: str | None = None,
    memory_limited: bool = False,
) -> dict[str, str]:
    """The environment the kernel starts with: safe names only, own HOME and TMPDIR."""
    base = os.environ if base is None else base
    env = {
        k: v
        for k, v in base.items()
        if (k in SAFE_ENV_NAMES or k.startswith(SAFE_ENV_PREFIXES)) and not is_secret_name(k)
    }
    env.setdefault("PATH", os.defpath)
    env.update(
        HOME=home,
        TMPDIR=tmp,
        IPYTHONDIR=os.path.join(home, ".ipython"),
        JUPYTER_CONFIG_DIR=os.path.join(home, ".jupyter"),
        JUPYTER_DATA_DIR=os.path.join(home, ".local", "share", "jupyter"),
        JUPYTER_RUNTIME_DIR=os.path.join(home, ".local", "share", "jupyter", "runtime"),
        MPLCONFIGDIR=os.path.join(home, ".matplotlib"),
        PYTHONNOUSERSITE="1",
        JUPYTER_PLATFORM_DIRS="1",
        PYDEVD_DISABLE_FILE_VALIDATION="1",
    )
    if user:
        env["USER"] = env["LOGNAME"] = user
    if memory_limited:
        # Keep what the allocators map writable close to what is really used, so the
        # memory limit (RLIMIT_DATA) measures data, not allocator arenas and pools.
        env.setdefault("MALLOC_ARENA_MAX", "2")
        env.setdefault("ARROW_DEFAULT_MEMORY_POOL", "system")
    for k, v in (extra or {}).items():
        if is_secret_name(k):
            raise ValueError(
                f"refusing to pass {k!r} to the kernel: it looks like a secret. Kernels run "
                "model-written code; give it only what that code may read."
            )
        env[k] = str(v)
    return env


# -- the unprivileged user -------------------------------------------------------


@dataclass
class KernelUser:
    """The unprivileged account an owned kernel runs as."""

    name: str
    uid: int
    gid: int


def resolve_user(run_as: str | int | None, *, private_folder: bool = True) -> KernelUser | None:
    """`"auto"`: `nobody` when the host is root, the kernel works in a private folder of its
    own and the host may become `nobody`; else the host's own user (None). A kernel working in
    one of the host's folders (`private_folder=False`: where cave was started, `--workdir`)
    runs as the host's user, who can write there and owns what it writes (`nobody` could not
    write a root host's folder). Root in a user namespace that does not map `nobody`
    (`unshare -r`, a rootless container) cannot hand it files or switch to it."""
    if run_as == "auto":
        if os.name != "posix" or os.geteuid() != 0 or not private_folder:
            return None
        try:
            nobody = pwd.getpwnam("nobody")
        except KeyError:
            return None
        if not (_mapped(nobody.pw_uid, "uid_map") and _mapped(nobody.pw_gid, "gid_map")):
            return None
        run_as = "nobody"
    if run_as is None:
        return None
    try:
        entry = pwd.getpwuid(run_as) if isinstance(run_as, int) else pwd.getpwnam(run_as)
    except KeyError:
        raise ValueError(f"run_as={run_as!r}: no such user on this machine") from None
    if entry.pw_uid == os.geteuid():
        return None
    if os.geteuid() != 0:
        raise ValueError(
            f"run_as={run_as!r} needs a root host (this process runs as uid {os.geteuid()})"
        )
    if entry.pw_uid == 0:
        return None
    return KernelUser(entry.pw_name, entry.pw_uid, entry.pw_gid)


def _mapped(ident: int, table: str) -> bool:
    """True when *ident* exists in this process's user namespace (`/proc/self/uid_map` or
    `gid_map`; True where there is no such file)."""
    try:
        lines = Path("/proc/self", table).read_text().splitlines()
    except OSError:
        return True
    for line in lines:
        fields = line.split()
        if len(fields) == 3 and int(fields[0]) <= ident < int(fields[0]) + int(fields[2]):
            return True
    return False


def _traversable(st: os.stat_result, user: KernelUser) -> bool:
    mode = st.st_mode
    if st.st_uid == user.uid:
        return bool(mode & stat.S_IXUSR)
    if st.st_gid == user.gid:
        return bool(mode & stat.S_IXGRP)
    return bool(mode & stat.S_IXOTH)


def needed_paths() -> list[str]:
    """Paths the kernel must reach: the interpreter, its stdlib, the environment."""
    paths = {
        os.path.realpath(sys.executable),
        sys.executable,
        sys.prefix,
        sys.base_prefix,
        sys.exec_prefix,
        sys.base_exec_prefix,
    }
    for entry in sys.path:
        if entry and os.path.isdir(entry):
            paths.add(entry)
    paths.update(editable_paths())
    import cave_tui

    # cave's own package, not the folder holding it: run from a checkout (an editable
    # install), the host imports only `cave_tui` from there, so the checkout itself can be
    # the kernel's writable working folder with the package read-only inside it.
    paths.add(os.path.dirname(os.path.abspath(cave_tui.__file__)))
    return sorted(p for p in paths if p and os.path.exists(p))


def editable_paths() -> list[str]:
    """Package directories that setuptools' editable installs import from outside `sys.path`
    (the `MAPPING` of each `__editable___*_finder` on `sys.meta_path`)."""
    found: list[str] = []
    for finder in sys.meta_path:
        module = sys.modules.get(getattr(finder, "__module__", "") or "")
        mapping = getattr(module, "MAPPING", None)
        if module is None or not module.__name__.startswith("__editable__"):
            continue
        if isinstance(mapping, dict):
            found += [p for p in mapping.values() if isinstance(p, str) and os.path.isdir(p)]
    return found


def blocked_ancestors(paths: list[str], user: KernelUser) -> dict[str, list[str]]:
    """{directory the user cannot traverse: [child names that must stay reachable]}."""
    plan: dict[str, set[str]] = {}
    for raw in paths:
        path = Path(os.path.abspath(raw))
        parts = path.parts
        for i in range(1, len(parts)):
            ancestor = Path(*parts[:i])
            try:
                st = os.stat(ancestor)
            except OSError:
                break
            if not _traversable(st, user):
                plan.setdefault(str(ancestor), set()).add(parts[i])
                break
    # An ancestor nested inside another one is reached through the outer bind.
    return {a: sorted(c) for a, c in sorted(plan.items())}


def can_isolate_mounts() -> bool:
    """Root with CAP_SYS_ADMIN on Linux: the launcher can give the kernel its own mounts."""
    if not sys.platform.startswith("linux") or os.geteuid() != 0:
        return False
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("CapEff:"):
                return bool(int(line.split()[1], 16) & (1 << 21))
    except (OSError, ValueError):
        return False
    return False


# -- the launch plan (JSON for the launcher) -----------------------------------


@dataclass
class LaunchPlan:
    """What the launcher does before it runs ipykernel (see launcher.py)."""

    argv: list[str]
    cwd: str
    connection_file: str
    uid: int | None = None
    gid: int | None = None
    user: str | None = None
    expose: dict[str, list[str]] = field(default_factory=dict)
    hide_proc: bool = False
    memory_limit: int | None = None  # RLIMIT_DATA: private writable memory
    address_space_limit: int | None = None  # RLIMIT_AS: the backstop (`address_space_backstop`)
    max_processes: int | None = None
    cgroups: dict[str, str] = field(default_factory=dict)  # controller -> directory
    runtime_dir: str | None = None  # removed by the launcher if the host dies
    seccomp_fd: int | None = None  # where the kernel's bwrap reads its seccomp filter
    seccomp_program: str = ""  # that filter, hex (written to a pipe by the launcher)
    private_net: bool = False  # its own network namespace, loopback only (unsandboxed, root)

    def to_json(self) -> dict[str, Any]:
        return asdict(self)


# -- cgroups (v1, where the host may create them) -----------------------------------

CGROUP_ROOT = Path("/sys/fs/cgroup")


def _own_cgroup(controller: str) -> str | None:
    try:
        lines = Path("/proc/self/cgroup").read_text().splitlines()
    except OSError:
        return None
    for line in lines:
        _, controllers, path = line.split(":", 2)
        if controller in controllers.split(","):
            return path
    return None


def create_cgroups(
    name: str, memory_limit: int | None, max_processes: int | None
) -> dict[str, str]:
    """Per-kernel v1 cgroups for memory and pids; {} where the host cannot make them.

    cgroup v2 needs a delegated subtree (systemd) to be useful from a process that
    already lives in a leaf cgroup; there the rlimits below are the limits.
    """
    made: dict[str, str] = {}
    wanted = {"memory": memory_limit, "pids": max_processes}
    for controller, value in wanted.items():
        if value is None:
            continue
        base = CGROUP_ROOT / controller
        own = _own_cgroup(controller)
        if own is None or not (base / "cgroup.procs").exists():
            continue
        directory = base / own.lstrip("/") / name
        try:
            directory.mkdir(exist_ok=True)
            if controller == "memory":
                (directory / "memory.limit_in_bytes").write_text(str(int(value)))
            else:
                (directory / "pids.max").write_text(str(int(value)))
        except OSError:
            remove_cgroup(str(directory))
            continue
        made[controller] = str(directory)
    return made


def cgroup_pids(directory: str) -> list[int]:
    try:
        text = (Path(directory) / "cgroup.procs").read_text()
    except OSError:
        return []
    return [int(p) for p in text.split()]


def cgroup_oom_kills(directory: str) -> int:
    """How many processes the OOM killer took in this memory cgroup (0 if unknown)."""
    try:
        text = (Path(directory) / "memory.oom_control").read_text()
    except OSError:
        return 0
    for line in text.splitlines():
        key, _, value = line.partition(" ")
        if key == "oom_kill":
            return int(value)
    try:
        return 1 if int((Path(directory) / "memory.failcnt").read_text()) else 0
    except (OSError, ValueError):
        return 0


def remove_cgroup(directory: str) -> None:
    try:
        os.rmdir(directory)
    except OSError:
        pass


# What importing pyarrow and pandas adds to what counts against a memory-limited kernel's
# RLIMIT_DATA before it can build a frame or an array sent to it (measured in a kernel on
# Linux x86-64 with 2 cores: 127 MiB, much of it the stacks of Arrow's thread pools).
DATA_LIBRARIES_SPACE = 144 << 20
_DATA_LIBRARY = b"libarrow"
# RLIMIT_AS is only a backstop above the memory limit (RLIMIT_DATA): room for what reserves
# address space without writing it (Polars' streaming engine reserves ~800 MB and touches
# little; libraries' code; thread stacks' guard pages) while still bounding shared mappings,
# which RLIMIT_DATA does not count.
ADDRESS_SPACE_FACTOR = 4
ADDRESS_SPACE_ROOM = 4 << 30


def address_space_backstop(memory_limit: int) -> int:
    """The kernel's RLIMIT_AS for a memory limit: four times it, and at least 4 GiB more."""
    return max(ADDRESS_SPACE_FACTOR * memory_limit, memory_limit + ADDRESS_SPACE_ROOM)


def data_in_use(pid: int | None, libraries: bool = False) -> int:
    """What counts against process *pid*'s memory limit (RLIMIT_DATA) now: its private
    writable memory (`VmData`, Linux >= 4.7); with *libraries*, plus `DATA_LIBRARIES_SPACE`
    while it has not mapped Arrow (None or gone: no process yet, so just those libraries,
    or 0)."""
    import psutil

    extra = DATA_LIBRARIES_SPACE if libraries else 0
    if pid is None:
        return extra
    try:
        info = psutil.Process(pid).memory_info()
        used = int(getattr(info, "data", info.vms))  # `data` is Linux's VmData
        if libraries:
            with open(f"/proc/{pid}/maps", "rb") as maps:
                extra = 0 if _DATA_LIBRARY in maps.read() else extra
    except (psutil.Error, OSError):
        return extra
    return used + extra


def half_of_ram() -> int | None:
    """An owned kernel's default memory limit: half of this machine's RAM (None if unknown)."""
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") // 2
    except (ValueError, OSError, AttributeError):
        return None
