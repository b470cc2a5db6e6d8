"""The sandbox's bwrap command line, its refusal where bubblewrap cannot run, the settings that
ask for it, and the host's files that a kernel must not redirect (no kernel started here)."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest

from cave_tui.app.config import load_config
from cave_tui.app.sandbox_report import sandbox_problem
from cave_tui.runtime.kernel import IPyKernelRuntime, SandboxUnavailable, hostfiles, sandbox
from cave_tui.runtime.kernel.limits import KernelUser


def plan(**kwargs) -> sandbox.SandboxPlan:  # type: ignore[no-untyped-def]
    base = dict(
        bwrap="/usr/bin/bwrap",
        workdir="/tmp/cave-kernel-x/work",
        writable=("/tmp/cave-kernel-x/home", "/tmp/cave-kernel-x/run"),
        readable=("/opt/venv", "/opt/venv/lib/site-packages", "/usr/lib/python3"),
        files=("/tmp/cave-kernel-x/conn/kernel-1.json",),
        env={"PATH": "/usr/bin", "HOME": "/tmp/cave-kernel-x/home"},
        uid=23456,
    )
    base.update(kwargs)
    return sandbox.SandboxPlan(**base)  # type: ignore[arg-type]


def pairs(argv: list[str], option: str) -> list[str]:
    return [argv[i + 1] for i, arg in enumerate(argv) if arg == option]


def test_the_command_line_isolates_everything_but_what_the_plan_lists():
    argv = sandbox.bwrap_argv(plan())
    assert argv[0] == "/usr/bin/bwrap" and argv[-1] == "--"
    for flag in (*sandbox.NAMESPACES, "--unshare-net", "--die-with-parent", "--new-session"):
        assert flag in argv
    assert "--clearenv" in argv and pairs(argv, "--uid") == pairs(argv, "--gid") == ["23456"]
    # the environment is exactly the plan's, after --clearenv
    assert argv.index("--clearenv") < argv.index("--setenv")
    assert pairs(argv, "--setenv") == ["HOME", "PATH"]
    # read-only: the environment, once (nested paths go through the outer bind), not /usr twice
    assert pairs(argv, "--ro-bind").count("/opt/venv") == 1
    assert "/opt/venv/lib/site-packages" not in argv and "/usr/lib/python3" not in argv
    # read-write: only the kernel's own directories and its workdir
    assert pairs(argv, "--bind") == [*plan().writable, plan().workdir]
    # a private /tmp before the kernel's directories (which live under /tmp) are bound
    assert argv.index("/tmp") < argv.index("/tmp/cave-kernel-x/home")
    assert "/" not in pairs(argv, "--ro-bind") and "/" not in pairs(argv, "--bind")


def test_allow_net_keeps_the_network_and_nothing_else():
    argv = sandbox.bwrap_argv(plan(allow_net=True))
    assert "--unshare-net" not in argv
    assert "--unshare-user" in argv and "--unshare-pid" in argv


def test_host_secrets_in_etc_are_masked():
    argv = sandbox.bwrap_argv(plan())
    if os.path.exists("/etc/shadow"):
        at = argv.index("/etc/shadow")
        assert argv[at - 2 : at] == ["--ro-bind", "/dev/null"]


def test_the_host_home_is_never_bound(monkeypatch: pytest.MonkeyPatch, tmp_path: Path):
    home = tmp_path / "home"
    (home / "project").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.setattr(sys, "path", [str(home), str(home / "project"), "/", *sys.path])
    paths = sandbox.python_paths()
    assert str(home) not in paths and "/" not in paths and str(tmp_path) not in paths
    assert str(home / "project") in paths  # an import directory inside it, read-only


def test_describe_puts_one_option_per_line():
    text = sandbox.describe(["/usr/bin/bwrap", "--bind", "/a b", "/a b", "--", "python"])
    assert text.splitlines() == ["/usr/bin/bwrap \\", "  --bind '/a b' '/a b' \\", "  -- python"]


# -- where bubblewrap cannot run ------------------------------------------------------------


def test_no_bwrap_on_path_refuses_the_sandboxed_kernel(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable, match=r"bubblewrap \(bwrap\) is not installed"):
        IPyKernelRuntime(sandbox=True)
    IPyKernelRuntime()  # the unsandboxed kernel does not need it


def test_a_bwrap_that_cannot_make_namespaces_refuses(monkeypatch, tmp_path):
    fake = tmp_path / "bwrap"
    said = "bwrap: No permissions to creating new namespace"
    fake.write_text(f"#!/bin/sh\necho '{said}' >&2\nexit 1\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(tmp_path))
    with pytest.raises(SandboxUnavailable) as caught:
        sandbox.require_bwrap(None)
    message = str(caught.value)
    assert "\n" not in message and "No permissions to creating new namespace" in message


def test_an_attached_kernel_cannot_be_sandboxed(tmp_path):
    with pytest.raises(ValueError, match="attached"):
        IPyKernelRuntime(connection_file=tmp_path / "kernel.json", sandbox=True)


def test_the_cli_exits_2_with_the_reason(tmp_path):
    env = {**os.environ, "PATH": str(tmp_path), "CAVE_CONFIG_DIR": str(tmp_path)}
    for argv in (["run", "--sandbox", "/vars"], ["sandbox"], ["--plain", "--sandbox"]):
        done = subprocess.run(
            [sys.executable, "-m", "cave_tui", *argv],
            env=env,
            cwd=tmp_path,
            capture_output=True,
            text=True,
            stdin=subprocess.DEVNULL,
            timeout=60,
        )
        assert done.returncode == 2, (argv, done.stderr)
        assert done.stderr.strip().splitlines() == [
            "cave: cannot sandbox the kernel: bubblewrap (bwrap) is not installed "
            "(Debian/Ubuntu: apt-get install bubblewrap)"
        ]


# -- settings -------------------------------------------------------------------------------


def test_the_kernel_table_env_and_flags_set_the_sandbox(tmp_path):
    path = tmp_path / "config.toml"
    path.write_text("[kernel]\nsandbox = true\nallow_net = true\nbogus = 1\n")
    config = load_config(path=path, environ={})
    assert config.sandbox and config.allow_net and config.uses_kernel
    assert config.source("sandbox") == "file"
    assert any("bogus" in w for w in config.warnings)
    config = load_config(path=path, environ={"CAVE_SANDBOX": "0"})
    assert not config.sandbox and config.source("sandbox") == "env"
    config = load_config({"allow_net": False}, path=path, environ={"CAVE_ALLOW_NET": "maybe"})
    assert not config.allow_net and any("allow_net" in w for w in config.warnings)


def test_sandbox_problem_is_silent_when_the_sandbox_is_off(monkeypatch, tmp_path):
    monkeypatch.setenv("PATH", str(tmp_path))
    assert sandbox_problem(load_config(path=tmp_path / "none.toml", environ={})) is None
    config = load_config({"sandbox": True}, path=tmp_path / "none.toml", environ={})
    assert "bubblewrap" in (sandbox_problem(config) or "")


# -- the host's files: never through a symlink ------------------------------------------------


def test_write_new_refuses_a_planted_symlink(tmp_path):
    target = tmp_path / "target"
    target.write_text("original")
    directory = tmp_path / "conn"
    directory.mkdir()
    (directory / "kernel-2.json").symlink_to(target)
    with pytest.raises(OSError):
        hostfiles.write_new(str(directory), "kernel-2.json", b"{}")
    assert target.read_text() == "original"
    (tmp_path / "linked").symlink_to(directory)
    with pytest.raises(OSError):  # nor through a symlinked directory
        hostfiles.write_new(str(tmp_path / "linked"), "kernel-3.json", b"{}")
    assert not (directory / "kernel-3.json").exists()


def test_the_log_is_never_opened_through_a_symlink(tmp_path):
    target = tmp_path / "target"
    target.write_text("original")
    (tmp_path / "launcher.log").symlink_to(target)
    with pytest.raises(OSError):
        hostfiles.open_log(str(tmp_path / "launcher.log"))
    assert hostfiles.read_tail(str(tmp_path / "launcher.log")) == ""
    assert target.read_text() == "original"


@pytest.mark.skipif(os.geteuid() != 0, reason="handing files to another user needs a root host")
def test_the_run_directory_is_the_hosts(tmp_path):
    user = KernelUser("nobody", 65534, 65534)
    dirs = hostfiles.make_run_dirs(user)
    try:
        base = os.stat(dirs.base)
        assert base.st_uid == 0 and stat.S_IMODE(base.st_mode) == 0o711
        assert os.stat(dirs.host).st_uid == 0 and stat.S_IMODE(os.stat(dirs.host).st_mode) == 0o700
        for name in hostfiles.KERNEL_DIRS:
            assert os.stat(dirs.sub(name)).st_uid == 65534
        path = hostfiles.write_connection(dirs, 1, {"key": "k"}, user)
        st = os.stat(path)
        assert (st.st_uid, stat.S_IMODE(st.st_mode)) == (65534, 0o400)
        assert os.stat(dirs.conn).st_uid == 0  # the kernel can read its file, not replace it
    finally:
        import shutil

        shutil.rmtree(dirs.base)


def test_the_kernel_table_and_the_kernel_setting_live_together(tmp_path):
    from cave_tui.app.config import save_setting

    path = tmp_path / "config.toml"
    path.write_text("kernel = true\n")
    assert load_config(path=path, environ={}).kernel
    save_setting("sandbox", True, path)  # goes into a [kernel] table: kernel = true moves there
    assert "[kernel]" in path.read_text()
    assert load_config(path=path, environ={}).kernel
    save_setting("kernel", True, path)
    config = load_config(path=path, environ={})
    assert config.kernel and config.sandbox and not config.warnings
    save_setting("allow_net", True, path)
    assert load_config(path=path, environ={}).allow_net


def test_the_app_builds_a_sandboxed_kernel_from_the_config(tmp_path):
    from cave_tui.app.services import AppServices

    config = load_config({"sandbox": True, "allow_net": True}, path=tmp_path / "x", environ={})
    services = AppServices(config)
    if sandbox_problem(config) is not None:  # no sandbox here: the runtime is never built
        with pytest.raises(SandboxUnavailable):
            services._build_runtime()
        return
    runtime = services._build_runtime()
    assert isinstance(runtime, IPyKernelRuntime) and runtime.sandbox and runtime.allow_net
    assert services.runtime_label == "kernel (sandbox)"


# -- what stays read-only whatever the plan's writable directories are ---------------------


def test_an_import_directory_inside_a_writable_one_stays_read_only():
    argv = sandbox.bwrap_argv(
        plan(workdir="/srv/project", readable=("/opt/venv", "/srv/project/src", "/srv"))
    )
    mounts = [(argv[i], argv[i + 1]) for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")]
    # /srv (ro) first, then the workdir inside it (rw), then its src/ (ro) again over that
    at = {mount: i for i, mount in enumerate(mounts)}
    assert at["--ro-bind", "/srv"] < at["--bind", "/srv/project"]
    assert at["--bind", "/srv/project"] < at["--ro-bind", "/srv/project/src"]
    assert [path for _, path in mounts].count("/opt/venv") == 1


def test_the_import_directory_under_the_workdir_is_bound_after_it():
    argv = sandbox.bwrap_argv(plan(workdir="/srv/project", readable=("/srv/project/src",)))
    rw, ro = argv.index("/srv/project"), argv.index("/srv/project/src")
    assert argv[rw - 1] == "--bind" and argv[ro - 1] == "--ro-bind" and rw < ro
    # also one under a system directory (bound read-only with it) when the workdir is there
    site = "/usr/local/lib/python3/site-packages"
    argv = sandbox.bwrap_argv(plan(workdir="/usr/local", readable=(site,)))
    rw, ro = argv.index("/usr/local"), argv.index(site)
    assert argv[rw - 1] == "--bind" and argv[ro - 1] == "--ro-bind" and rw < ro


def test_a_workdir_that_is_an_import_directory_is_refused(monkeypatch, tmp_path):
    monkeypatch.setattr(sys, "path", [str(tmp_path), *sys.path])
    with pytest.raises(SandboxUnavailable, match="import directory"):
        sandbox.kernel_plan(
            str(tmp_path / "run"), str(tmp_path), "/c.json", {}, user=None, uid=1, allow_net=False
        )


def test_cave_s_own_checkout_can_be_the_working_directory(monkeypatch):
    """Run from a checkout (the README's `pip install -e .` then `cave demo`), the host
    imports only `cave_tui` from it: the checkout is the writable working folder and the
    package inside it stays read-only (it used to be refused, so the demo ran unsandboxed)."""
    import cave_tui

    package = os.path.dirname(os.path.abspath(cave_tui.__file__))
    checkout = os.path.dirname(package)
    real = os.path.realpath(checkout)
    monkeypatch.setattr(sys, "path", [p for p in sys.path if os.path.realpath(p or ".") != real])
    monkeypatch.chdir("/")  # sys.path's "" would be the checkout
    readable = tuple(sandbox.python_paths())
    assert package in readable and checkout not in readable
    sandbox.check_workdir(checkout)  # no SandboxUnavailable
    argv = sandbox.bwrap_argv(plan(workdir=checkout, readable=readable))
    rw, ro = argv.index(checkout), argv.index(package)
    assert argv[rw - 1] == "--bind" and argv[ro - 1] == "--ro-bind" and rw < ro


def test_private_tmpfs_are_sized_and_dev_is_read_only():
    argv = sandbox.bwrap_argv(plan(tmpfs_size=1 << 29))
    for path in ("/tmp", "/dev/shm"):
        at = argv.index(path)
        assert argv[at - 1] == "--tmpfs" and argv[at - 3 : at - 1] == ["--size", str(1 << 29)]
    assert pairs(argv, "--remount-ro")[:1] == ["/dev"]
    for path in sandbox.SECRET_DIRS:
        if os.path.isdir(path):
            assert path in pairs(argv, "--remount-ro")


def test_an_editable_install_outside_sys_path_is_an_import_directory(monkeypatch, tmp_path):
    """setuptools' editable finders import a package from its source tree, which need not be
    on sys.path: it is bound read-only like one (and refused as the working directory)."""
    import types

    package = tmp_path / "src" / "mypkg"
    package.mkdir(parents=True)
    module = types.ModuleType("__editable___mypkg_1_0_finder")
    module.MAPPING = {"mypkg": str(package)}  # type: ignore[attr-defined]

    class Finder:
        pass

    Finder.__module__ = module.__name__
    monkeypatch.setitem(sys.modules, module.__name__, module)
    monkeypatch.setattr(sys, "meta_path", [*sys.meta_path, Finder])
    assert str(package) in sandbox.python_paths()
    argv = sandbox.bwrap_argv(plan(workdir=str(tmp_path), readable=tuple(sandbox.python_paths())))
    rw, ro = argv.index(str(tmp_path)), argv.index(str(package))
    assert argv[rw - 1] == "--bind" and argv[ro - 1] == "--ro-bind" and rw < ro
    with pytest.raises(SandboxUnavailable, match="import directory"):
        sandbox.kernel_plan(
            str(tmp_path / "run"), str(package), "/c.json", {}, user=None, uid=1, allow_net=False
        )
