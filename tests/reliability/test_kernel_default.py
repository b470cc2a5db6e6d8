"""The app's default runtime, the kernel, where cave runs as root in a user namespace that
has no `nobody` (a rootless container, `unshare -r`): it runs as that user, in the folder
cave was started from, as the in-process runtime would."""

from __future__ import annotations

import subprocess
import sys

from tests.reliability.real_cave import cave, code, needs_tmpfs, script

UNSHARE = ("unshare", "-rm")


@needs_tmpfs  # the same check: this machine can make a user namespace
def test_root_without_nobody_runs_the_kernel_as_itself():
    probe = "from cave_tui.runtime.kernel.limits import resolve_user; print(resolve_user('auto'))"
    inside = subprocess.run([*UNSHARE, sys.executable, "-c", probe], capture_output=True, text=True)
    assert inside.stdout.strip() == "None", inside.stderr


@needs_tmpfs
def test_the_kernel_works_in_the_folder_cave_was_started_from(tmp_path):
    model = script(
        tmp_path / "m.yaml",
        [code("open('made-by-the-kernel.txt', 'w').write('hi')\n"
              "print(type(get_ipython()).__name__)"), "done"],
    )  # fmt: skip
    result = cave(
        "run", "write a file", "--model", model, "--policy", "trusted", "--sessions-dir", "s",
        "--json", cwd=tmp_path, prefix=UNSHARE,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "made-by-the-kernel.txt").read_text() == "hi"
    assert "ZMQInteractiveShell" in result.stdout  # a Jupyter kernel ran it, not the host
