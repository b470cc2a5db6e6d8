"""A kernel plants symlinks where the host used to write (its connection file in run/, the
launcher log): the host refuses them or never goes there, sandbox or not."""

from __future__ import annotations

import asyncio
import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from cave_tui.runtime.kernel import IPyKernelRuntime


@pytest.fixture(scope="module")
def plain_kernel() -> Iterator[IPyKernelRuntime]:
    runtime = IPyKernelRuntime(cell_timeout=60, interrupt_grace=1.0, checkpoint_bytes=0)
    asyncio.run(runtime.start())
    yield runtime
    asyncio.run(runtime.stop())


async def test_planted_symlinks_are_not_followed(plain_kernel, tmp_path: Path):
    kernel = plain_kernel
    base = kernel.runtime_dir
    assert base is not None
    target = tmp_path / "host-file"
    target.write_text("original")
    target.chmod(0o666)  # the kernel's user could write it: only the host's own act counts
    before = os.stat(target)
    links = [
        f"{base}/run/kernel-2.json",  # where the next connection file used to be written
        f"{base}/launcher.log",  # where the launcher log used to be
        f"{base}/host/launcher.log",
        f"{base}/conn/kernel-2.json",
    ]
    result = await kernel.execute(
        "import os\nout = {}\n"
        f"for link in {links!r}:\n"
        "    try:\n"
        "        if os.path.lexists(link):\n"
        "            os.rename(link, link + '.old')\n"
        f"        os.symlink({str(target)!r}, link)\n"
        "        out[link] = 'planted'\n"
        "    except OSError as exc:\n"
        "        out[link] = type(exc).__name__\n"
    )
    assert result.success, result.error
    planted = await kernel.retrieve("out")
    if os.geteuid() == 0:  # the kernel runs as another user: the host's parts are closed to it
        assert planted == {
            links[0]: "planted",
            links[1]: "PermissionError",
            links[2]: "PermissionError",
            links[3]: "PermissionError",
        }
    await kernel.restart()  # writes kernel-2.json and appends to the log
    assert (await kernel.execute("1 + 1")).output == "2\n"
    after = os.stat(target)
    assert target.read_text() == "original"
    assert (after.st_uid, after.st_gid, after.st_mode) == (
        before.st_uid,
        before.st_gid,
        before.st_mode,
    )
    conn = Path(base, "conn", "kernel-2.json")
    assert not conn.is_symlink() and conn.read_text().startswith("{")
