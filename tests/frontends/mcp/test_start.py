"""`cave mcp --kernel`'s start: the SDK is imported while the kernel boots, and every way
the start can end stops that kernel."""

from __future__ import annotations

import signal
import subprocess
from pathlib import Path

import pytest

from tests.helpers.protocol_start import (
    DEADLINE,
    no_kernel_left,
    spawn,
    start_with_a_broken_sdk,
    wait_for_kernel,
)


def test_stdin_closed_during_the_start_leaves_no_kernel(tmp_path: Path) -> None:
    process = spawn(tmp_path, "mcp")
    try:
        wait_for_kernel(process, tmp_path)
        assert process.stdin is not None
        process.stdin.close()  # the client leaves while the kernel still boots
        assert process.wait(timeout=DEADLINE) == 0, (tmp_path / "stderr.txt").read_text()
    finally:
        if process.poll() is None:
            process.kill()
    assert no_kernel_left(tmp_path)


def test_an_sdk_that_fails_to_import_stops_the_kernel_started_meanwhile(tmp_path: Path) -> None:
    code, said = start_with_a_broken_sdk(tmp_path, "mcp")
    assert code == 2, said
    assert "ImportError: this mcp is broken" in said
    assert "Traceback" not in said
    assert no_kernel_left(tmp_path)


def test_ctrl_c_during_the_start_leaves_no_kernel(tmp_path: Path) -> None:
    process = spawn(tmp_path, "mcp")
    try:
        wait_for_kernel(process, tmp_path)
        process.send_signal(signal.SIGINT)  # while the kernel boots and the SDK loads
        try:
            code = process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:  # where it stalled: what it said, its threads' stacks
            process.send_signal(signal.SIGABRT)  # faulthandler (spawn's env) dumps them
            process.wait(timeout=DEADLINE)
            pytest.fail(f"no exit in {DEADLINE} s:\n{(tmp_path / 'stderr.txt').read_text()}")
        assert code == 130, (tmp_path / "stderr.txt").read_text()
    finally:
        if process.poll() is None:
            process.kill()
    assert no_kernel_left(tmp_path)
