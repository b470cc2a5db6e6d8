"""Issue 29, item 3: cells run in the folder `cave` was started from (or `--workdir`, or the
config's `[kernel] workdir`), whatever the host's user (this machine's tests run as root,
whose kernel once ran as `nobody` in a temporary folder): relative paths resolve there, and
what cells write stays after exit, owned by the host's user. On the default kernel, with and
without the sandbox, through the real `cave`."""

from __future__ import annotations

import os
from pathlib import Path

import pexpect

from cave_tui.runtime.kernel import IPyKernelRuntime, limits
from tests.reliability.real_cave import CAVE, cave, code, env, script
from tests.runtime.kernel.test_sandbox_escapes import sandbox_or_fail

WRITE_AND_READ = (
    "import os, pandas as pd\n"
    "total = int(pd.read_csv({source!r}).b.sum())\n"
    "open('x.txt', 'w').write(str(total))\n"
    "open('out.png', 'wb').write(b'\\x89PNG')\n"
    "print(os.getcwd(), os.getuid(), os.path.exists('../data/x.csv'),"
    " type(get_ipython()).__name__)"
)


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """tmp/project (where cave starts, data/ inside) and tmp/data/x.csv beside it."""
    project = tmp_path / "project"
    for folder in (project / "data", tmp_path / "data"):
        folder.mkdir(parents=True)
        (folder / "x.csv").write_text("a,b\n1,2\n3,4\n")
    return project, tmp_path / "data" / "x.csv"


def _said(result) -> str:  # type: ignore[no-untyped-def]
    """Standard output without its white space: the console folds long lines, a long
    temporary path (an xdist worker's) inside a word too."""
    return "".join(result.stdout.split())


def _has(said: str, text: str) -> bool:
    return "".join(text.split()) in said


def _kept(folder: Path) -> None:
    """What the cell wrote is there after cave exited, and belongs to the host's user."""
    assert (folder / "x.txt").read_text() == "6"
    assert (folder / "out.png").read_bytes() == b"\x89PNG"
    for name in ("x.txt", "out.png"):
        assert (folder / name).stat().st_uid == os.getuid()


def test_the_default_kernel_works_where_cave_was_started(tmp_path):
    project, _ = _project(tmp_path)
    model = script(tmp_path / "m.yaml", [code(WRITE_AND_READ.format(source="../data/x.csv")), "ok"])
    result = cave(
        "run", "go", "--model", model, "--policy", "trusted", "--sessions-dir", "../s",
        cwd=project,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert _has(_said(result), f"{project} {os.getuid()} True ZMQInteractiveShell")
    _kept(project)


def test_the_sandboxed_kernel_works_where_cave_was_started(tmp_path):
    """The sandbox shows the kernel the working folder (read-write) and nothing beside it."""
    sandbox_or_fail()
    project, _ = _project(tmp_path)
    model = script(tmp_path / "m.yaml", [code(WRITE_AND_READ.format(source="data/x.csv")), "ok"])
    result = cave(
        "run", "go", "--model", model, "--policy", "trusted", "--sessions-dir", "../s",
        "--sandbox", cwd=project,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    said = _said(result)
    # ../data: not there
    assert _has(said, f"{project}") and _has(said, "False ZMQInteractiveShell")
    _kept(project)


def test_workdir_from_the_flag_and_from_the_config_file(tmp_path):
    """`--workdir DIR` and `[kernel] workdir` work as if cave were started in DIR: cells
    run there, and ./sessions is made there; a folder that does not exist stops the start."""
    project, _ = _project(tmp_path)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    model = script(tmp_path / "m.yaml", [code(WRITE_AND_READ.format(source="../data/x.csv")), "ok"])
    result = cave(
        "run", "go", "--model", model, "--policy", "trusted", "--workdir", str(project),
        cwd=elsewhere,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert _has(_said(result), f"{project} {os.getuid()} True")
    _kept(project)
    assert (project / "sessions").is_dir() and not (elsewhere / "sessions").exists()

    second = tmp_path / "second"
    second.mkdir()
    config = elsewhere / "config"  # real_cave's CAVE_CONFIG_DIR
    config.mkdir()
    (config / "config.toml").write_text(f'[kernel]\nworkdir = "{second}"\n')
    again = script(tmp_path / "m2.yaml", [code("open('y.txt', 'w').write('here')"), "ok"])
    result = cave(
        "run", "go", "--model", again, "--policy", "trusted", "--in-process", cwd=elsewhere
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (second / "y.txt").read_text() == "here"

    missing = cave("run", "/vars", "--workdir", str(tmp_path / "nope"), cwd=elsewhere)
    assert missing.returncode == 2
    assert "workdir" in missing.stderr and "does not exist" in missing.stderr


def test_plain_with_workdir_on_the_default_kernel(tmp_path):
    """`cave --plain --workdir DIR`: `!` code in the kernel writes and reads relative to DIR."""
    project, _ = _project(tmp_path)
    child = pexpect.spawn(
        CAVE,
        ["--plain", "--workdir", str(project), "--policy", "trusted", "--sessions-dir", "s"],
        cwd=str(tmp_path),
        env=env(tmp_path, PROMPT_TOOLKIT_NO_CPR="1"),  # pexpect answers no cursor queries
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    try:
        child.expect("cave›")
        child.sendline("!open('z.txt', 'w').write('k'); print('run', type(get_ipython()).__name__)")
        child.expect("run ZMQInteractiveShell")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    assert child.exitstatus == 0
    assert (project / "z.txt").read_text() == "k" and (project / "s").is_dir()


def test_a_kernel_given_a_folder_keeps_the_host_user(tmp_path):
    """The library's rule behind it: `run_as="auto"` drops a root host to `nobody` only for a
    kernel in a private folder (no `cwd=`); nothing starts here."""
    assert IPyKernelRuntime(cwd=tmp_path).user is None
    assert IPyKernelRuntime().user == limits.resolve_user("auto")  # `nobody` on a root host
