"""Driving the real `cave` command in the reliability tests: scripted replies, isolated dirs."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

CAVE = str(Path(sys.executable).with_name("cave"))


def script(path: Path, replies: list[str]) -> str:
    """A `scripted:` model spec replying *replies* in order."""
    path.write_text(yaml.safe_dump(replies))
    return f"scripted:{path}"


def code(src: str) -> str:
    return f"```python\n{src}\n```"


def env(tmp_path: Path, **extra: str) -> dict[str, str]:
    """The environment of a child `cave`: its own config and data dirs, no CAVE_* of the host."""
    out = {k: v for k, v in os.environ.items() if not k.startswith("CAVE_")}
    out.update(CAVE_CONFIG_DIR=str(tmp_path / "config"), CAVE_DATA_DIR=str(tmp_path / "data"))
    out.update(CAVE_LOCAL_MODEL="off")  # never the embedded model: every test names its own
    # the kernel unsandboxed unless a test asks for the sandbox (`--sandbox`), as in
    # tests/conftest.py; tests/frontends/cli/test_default_sandbox.py covers the default
    out.update(CAVE_SANDBOX="0")
    out.update(extra)
    return out


def cave(
    *args: str,
    cwd: Path,
    timeout: float = 90,
    prefix: tuple[str, ...] = (),
    extra_env: dict[str, str] | None = None,
) -> subprocess.CompletedProcess[str]:
    """Run `cave ARGS` (after *prefix*, e.g. an `unshare` line) to its end."""
    return subprocess.run(
        [*prefix, CAVE, *args],
        cwd=cwd,
        env=env(cwd, **(extra_env or {})),
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def can_mount_tmpfs() -> bool:
    """True when `unshare -rm` can mount a tmpfs here (a private mount namespace)."""
    if shutil.which("unshare") is None:
        return False
    probe = subprocess.run(
        ["unshare", "-rm", "sh", "-c", "mount -t tmpfs -o size=64k tmpfs /mnt"],
        capture_output=True,
    )
    return probe.returncode == 0


needs_tmpfs = pytest.mark.skipif(
    not can_mount_tmpfs(), reason="this machine cannot mount a tmpfs in a user namespace"
)


def with_tmpfs(*mounts: tuple[Path, str]) -> tuple[str, ...]:
    """A command prefix that runs the command with tmpfs *mounts* ((path, options) pairs) in a
    private mount namespace: the mounts vanish with the process."""
    lines = [f"mount -t tmpfs -o {opts} tmpfs '{path}'" for path, opts in mounts]
    return ("unshare", "-rm", "sh", "-c", " && ".join([*lines, 'exec "$@"']), "sh")


def shell(body: str, *, cwd: Path, prefix: tuple[str, ...] = (), timeout: float = 120):
    """Run the shell line *body* (after *prefix*) with a child `cave`'s environment."""
    return subprocess.run(
        [*prefix, "sh", "-c", body],
        cwd=cwd,
        env=env(cwd),
        capture_output=True,
        text=True,
        timeout=timeout,
    )
