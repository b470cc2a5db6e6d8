"""The kernel is sandboxed by default wherever bubblewrap works; where it cannot be, cave starts
unsandboxed with a one-line warning naming the reason and the fix; `--no-sandbox` turns it
off, `--sandbox` requires it; `--mount PATH[:ro]` shows the sandboxed kernel more of the host
and `--inject` still reads files from anywhere (the host reads them)."""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
import typer
import yaml

from cave_tui.app.config import load_config
from cave_tui.app.sandbox_report import sandbox_problem, settle_sandbox
from cave_tui.frontends.cli.launch import build_services
from cave_tui.runtime.kernel import sandbox
from cave_tui.runtime.kernel.errors import SandboxUnavailable

CAVE = str(Path(sys.executable).with_name("cave"))


@pytest.fixture
def default_env(isolated_dirs: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The settings a user gets who set none: the kernel, the sandbox left at its default."""
    monkeypatch.delenv("CAVE_KERNEL", raising=False)
    monkeypatch.delenv("CAVE_SANDBOX", raising=False)
    return isolated_dirs


def no_bwrap(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """A PATH on which bubblewrap is not installed."""
    folder.mkdir(exist_ok=True)
    monkeypatch.setenv("PATH", str(folder))


def bwrap_without_namespaces(monkeypatch: pytest.MonkeyPatch, folder: Path) -> None:
    """A bwrap that fails as it does where user namespaces are turned off."""
    folder.mkdir(exist_ok=True)
    fake = folder / "bwrap"
    fake.write_text(
        "#!/bin/sh\necho 'bwrap: No permissions to create new namespace, likely because the "
        "kernel does not allow non-privileged user namespaces.' >&2\nexit 1\n"
    )
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", str(folder))


# -- the default, decided once before anything starts -------------------------------------


def test_the_default_is_the_sandboxed_kernel_where_bubblewrap_works(default_env):
    assert sandbox_problem(load_config({"sandbox": True})) is None, "bwrap must work here"
    services = build_services({}, need_model=False)
    config = services.config
    assert config.sandbox and config.kernel and config.source("sandbox") == "default"
    assert not any("sandbox" in notice for notice in services.notices)
    runtime = services._build_runtime()
    assert runtime.sandbox and runtime.label == "kernel (sandbox)"


@pytest.mark.parametrize("host", [no_bwrap, bwrap_without_namespaces])
def test_where_it_cannot_work_cave_starts_unsandboxed_with_one_warning(
    default_env, monkeypatch, host
):
    host(monkeypatch, default_env / "bin")
    services = build_services({}, need_model=False)
    assert not services.config.sandbox and services.config.uses_kernel
    warnings = [notice for notice in services.notices if "sandbox" in notice]
    assert len(warnings) == 1 and "\n" not in warnings[0], services.notices
    warning = warnings[0]
    assert "runs unsandboxed" in warning and "--no-sandbox" in warning
    if host is no_bwrap:  # the reason, and the fix
        assert "bubblewrap (bwrap) is not installed" in warning
        assert "apt-get install bubblewrap" in warning
    else:
        assert "cannot create user namespaces" in warning and "allow" in warning
    assert "the sandbox cannot work here" in services.boundary_notice  # not "--sandbox …"
    runtime = services._build_runtime()
    assert not runtime.sandbox and runtime.label == "kernel"


def test_no_sandbox_turns_it_off_without_a_warning_and_sandbox_requires_it(
    default_env, monkeypatch
):
    no_bwrap(monkeypatch, default_env / "bin")
    services = build_services({"sandbox": False}, need_model=False)
    assert not services.config.sandbox and not services.config.sandbox_asked
    assert not any("sandbox" in notice for notice in services.notices)
    assert "without --no-sandbox the sandbox walls it in" in services.boundary_notice
    with pytest.raises(SystemExit) as exited:  # asked for: it must work, or no start
        build_services({"sandbox": True}, need_model=False)
    assert exited.value.code == 2
    monkeypatch.setenv("CAVE_SANDBOX", "1")  # the same asked in the environment (or file)
    with pytest.raises(SystemExit):
        build_services({}, need_model=False)
    monkeypatch.delenv("CAVE_SANDBOX")
    (default_env / "config").mkdir()
    (default_env / "config" / "config.toml").write_text("[kernel]\nsandbox = false\n")
    services = build_services({}, need_model=False)  # off in the file: off, and no warning
    assert not services.config.sandbox and services.config.source("sandbox") == "file"
    assert not any("sandbox" in notice for notice in services.notices)


def test_in_process_there_is_nothing_to_sandbox(default_env, monkeypatch):
    no_bwrap(monkeypatch, default_env / "bin")
    services = build_services({"kernel": False}, need_model=False)
    assert not services.config.sandbox and not services.config.uses_kernel
    assert not any("sandbox" in notice for notice in services.notices)


def test_settle_decides_once_and_leaves_an_asked_sandbox_alone(default_env, monkeypatch):
    config = load_config()
    assert settle_sandbox(config) is None and config.sandbox
    no_bwrap(monkeypatch, default_env / "bin")
    asked = load_config({"sandbox": True})
    assert settle_sandbox(asked) is None and asked.sandbox  # refused by sandbox_problem
    assert "bubblewrap" in (sandbox_problem(asked) or "")


# -- --mount: settings and the bwrap command line -----------------------------------------


def test_mount_is_a_setting_of_flags_env_and_the_kernel_table(default_env, tmp_path):
    data, ref = tmp_path / "data", tmp_path / "ref dir"
    data.mkdir()
    ref.mkdir()
    config = load_config({"mount": [f"{data}:ro", str(ref)]})
    assert config.mounts == [(str(data), True), (str(ref), False)]
    config = load_config(environ={"CAVE_MOUNT": f"{data}:ro '{ref}'"}, path=tmp_path / "x")
    assert config.mounts == [(str(data), True), (str(ref), False)]
    (tmp_path / "config.toml").write_text(f'[kernel]\nmount = ["{data}:ro"]\n')
    config = load_config(path=tmp_path / "config.toml", environ={})
    assert config.mounts == [(str(data), True)] and config.source("mount") == "file"


def test_a_missing_mount_is_a_clear_error(default_env, tmp_path):
    missing = tmp_path / "nope"
    with pytest.raises(typer.BadParameter) as caught:
        build_services({"mount": [f"{missing}:ro"]}, need_model=False)
    assert caught.value.param_hint == "--mount"
    assert f"{missing} does not exist" in str(caught.value)
    for forbidden in ("/", "/proc/1", "/dev"):
        with pytest.raises(typer.BadParameter, match="cannot be shown"):
            build_services({"mount": [forbidden]}, need_model=False)
    (tmp_path / "config.toml").write_text(f'[kernel]\nmount = ["{missing}"]\n')
    config = load_config(path=tmp_path / "config.toml", environ={})  # a file's: warned
    assert config.mount == [] and any("does not exist" in w for w in config.warnings)


def test_mounts_never_open_an_import_directory_nor_a_secret():
    plan = sandbox.SandboxPlan(
        bwrap="/usr/bin/bwrap",
        workdir="/data/project",
        writable=("/run/k/home",),
        readable=("/data/lib/.venv",),
        mounts=(("/data/lib", False), ("/data/project/raw", True), ("/etc", False)),
    )
    argv = sandbox.bwrap_argv(plan)
    binds = [(argv[i], argv[i + 1]) for i, a in enumerate(argv) if a in ("--bind", "--ro-bind")]
    # the host imports from .venv: inside a writable mount it is bound read-only again, after
    assert binds.index(("--bind", "/data/lib")) < binds.index(("--ro-bind", "/data/lib/.venv"))
    # a read-only mount inside the (writable) working folder stays read-only: bound after it
    assert binds.index(("--bind", "/data/project")) < binds.index(
        ("--ro-bind", "/data/project/raw")
    )
    # the secrets stay hidden whatever is mounted: masked after every bind
    masked = [
        argv[i + 2] for i, a in enumerate(argv) if a == "--ro-bind" and argv[i + 1] == "/dev/null"
    ]
    assert masked and all(argv.index(path) > argv.index("/etc") for path in masked)


def test_a_writable_mount_inside_an_import_directory_is_refused(default_env, monkeypatch):
    inside = default_env / "lib" / "pkg"
    inside.mkdir(parents=True)
    monkeypatch.setattr(sys, "path", [str(default_env / "lib"), *sys.path])
    with pytest.raises(SandboxUnavailable, match="import directory"):
        sandbox.check_mounts([(str(inside), False)])
    sandbox.check_mounts([(str(inside), True)])  # read-only is fine
    with pytest.raises(SystemExit):  # asked for: no start
        build_services({"sandbox": True, "mount": [str(inside)]}, need_model=False)
    services = build_services({"mount": [str(inside)]}, need_model=False)  # the default
    assert not services.config.sandbox
    assert any("read-write" in notice for notice in services.notices), services.notices


# -- the real `cave run`, as a user starts it -----------------------------------------------


CELL = """\
import os
rows = open(os.path.join(RO, "d.csv")).read().split()
try:
    open(os.path.join(RO, "new.txt"), "w")
    ro = "written"
except OSError as exc:
    ro = type(exc).__name__
with open(os.path.join(RW, "out.txt"), "w") as fh:
    fh.write("from the kernel")
try:
    open(os.path.join("raw", "new.txt"), "w")
    ro += " raw written"
except OSError as exc:
    ro += " raw " + type(exc).__name__
print("RESULT", rows[0], ro, os.path.exists(SECRET), list(given.columns), os.getcwd() == WORK)
"""


def test_cave_run_is_sandboxed_by_default_with_mounts_and_injects(tmp_path):
    work, ro, rw, elsewhere = (tmp_path / n for n in ("work", "ro", "rw", "elsewhere"))
    for folder in (work, ro, rw, elsewhere, work / "raw"):
        folder.mkdir()
    (ro / "d.csv").write_text("a,b\n1,2\n")
    (elsewhere / "secret.txt").write_text("not for the kernel")
    (elsewhere / "given.csv").write_text("x,y\n3,4\n")
    secret = elsewhere / "secret.txt"
    setup = f"RO, RW, SECRET, WORK = {str(ro)!r}, {str(rw)!r}, {str(secret)!r}, {str(work)!r}\n"
    replies = [f"```python\n{setup}{CELL}```", "done"]
    (tmp_path / "m.yaml").write_text(yaml.safe_dump(replies))
    env = {k: v for k, v in os.environ.items() if k not in ("CAVE_KERNEL", "CAVE_SANDBOX")}
    env.update(CAVE_CONFIG_DIR=str(tmp_path / "config"), CAVE_DATA_DIR=str(tmp_path / "data"))
    done = subprocess.run(
        [CAVE, "run", "go", "--model", f"scripted:{tmp_path / 'm.yaml'}", "--policy", "trusted",
         "--mount", f"{ro}:ro", "--mount", str(rw), "--mount", "raw:ro",
         "--inject", f"{elsewhere / 'given.csv'}:given"],
        cwd=work, env=env, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    banner = f"the kernel is sandboxed (bubblewrap): it writes only in {work}"
    assert banner in done.stderr, done.stderr
    # the read-only mount read, not written; the other folder of the host not there at all;
    # the injected file (read by the host) there; the cell ran in the working folder
    assert "RESULT a,b OSError raw OSError False ['x', 'y'] True" in done.stdout, done.stdout
    assert (rw / "out.txt").read_text() == "from the kernel"
    assert not (ro / "new.txt").exists() and not (work / "raw" / "new.txt").exists()


# -- cave started in the home folder ------------------------------------------------------


def test_started_in_the_home_folder_the_kernel_cannot_change_its_dotfiles(default_env, monkeypatch):
    """The working folder is writable, but not the host user's dotfiles in it: a kernel
    must not change what the host's shell runs next, nor cave's own config.toml."""
    import asyncio

    from cave_tui.app.services import config_runtime

    home = default_env / "home"
    (home / ".config" / "cave").mkdir(parents=True)
    (home / ".bashrc").write_text("# mine\n")
    (home / ".config" / "cave" / "config.toml").write_text("")
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.chdir(home)
    argv = sandbox.bwrap_argv(
        sandbox.SandboxPlan(bwrap="/usr/bin/bwrap", workdir=str(home), writable=(), readable=())
    )
    bashrc = argv.index(str(home / ".bashrc"))
    assert argv[bashrc - 1] == "--ro-bind" and bashrc > argv.index(str(home))
    runtime = config_runtime(load_config({"policy": "trusted"}))
    code = (
        "import os\nout = []\n"
        "for path in ('.bashrc', '.config/cave/config.toml', 'data.csv'):\n"
        "    try:\n"
        "        open(path, 'a').write('x')\n"
        "        out.append('written')\n"
        "    except OSError as exc:\n"
        "        out.append(type(exc).__name__)\n"
    )

    async def run() -> object:
        await runtime.start()
        try:
            result = await runtime.execute(code)
            assert result.success, result.error
            return await runtime.retrieve("out")
        finally:
            await runtime.stop()

    assert runtime.sandbox
    assert asyncio.run(run()) == ["OSError", "OSError", "written"]
    assert (home / ".bashrc").read_text() == "# mine\n"
    assert (home / "data.csv").read_text() == "x"


def test_the_root_folder_is_never_a_sandboxed_kernels_working_folder(default_env, monkeypatch):
    """`--bind / /` would show (and, as the host's user, let it write) the whole host."""
    for folder in ("/", "/usr", "/etc"):
        with pytest.raises(SandboxUnavailable, match="the host's own"):
            sandbox.check_workdir(folder)
    with pytest.raises(SandboxUnavailable, match="private folders of every kernel"):
        sandbox.check_workdir(tempfile.gettempdir())
    sandbox.check_workdir(str(default_env))  # a folder inside it is fine
    monkeypatch.chdir("/")
    services = build_services({}, need_model=False)  # the default: unsandboxed, said why
    assert not services.config.sandbox
    assert any("cannot sandbox the kernel in /" in notice for notice in services.notices)
    with pytest.raises(SystemExit):  # asked for: no start
        build_services({"sandbox": True}, need_model=False)
