"""Ctrl+C ends `cave mcp` while it serves and the client says nothing, whatever its stdin
and stdout are (a stdin read blocked in the SDK's worker thread held the exit until the
next line came: a pipe with stdout not a pipe, as an editor may spawn it, or a terminal)."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

from tests.helpers.protocol_start import DEADLINE, spawn

STARTED = "cave mcp: session"


def _serve(folder: Path, stdin: int) -> subprocess.Popen[bytes]:
    """`cave mcp --in-process` with *stdin*; Ctrl+C as from a terminal (`spawn`)."""
    return spawn(folder, "mcp", runtime="--in-process", stdin=stdin)


def _serving(process: subprocess.Popen[bytes], folder: Path) -> None:
    deadline = time.monotonic() + DEADLINE
    while STARTED not in (folder / "stderr.txt").read_text():
        assert process.poll() is None, (folder / "stderr.txt").read_text()
        assert time.monotonic() < deadline, "cave mcp did not start"
        time.sleep(0.05)
    time.sleep(0.5)  # serving, reading stdin


@pytest.mark.parametrize("stdin", ["pipe", "terminal"])
def test_ctrl_c_while_serving_ends_it(tmp_path: Path, stdin: str) -> None:
    if stdin == "pipe":
        read, write = os.pipe()  # held open: the client is there and says nothing
    else:
        write, read = os.openpty()  # the terminal: its other end held open
    process = _serve(tmp_path, read)
    os.close(read)
    try:
        _serving(process, tmp_path)
        process.send_signal(signal.SIGINT)
        try:
            code = process.wait(timeout=DEADLINE)
        except subprocess.TimeoutExpired:
            pytest.fail(f"no exit after Ctrl+C:\n{(tmp_path / 'stderr.txt').read_text()}")
        assert code == 128 + signal.SIGINT, (tmp_path / "stderr.txt").read_text()
    finally:
        os.close(write)
        if process.poll() is None:
            process.kill()
            process.wait()


def test_a_stdin_read_by_the_thread_skips_a_line_over_the_limit(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    import io

    from cave_tui.frontends.mcp import transport

    monkeypatch.setattr(transport, "LINE_LIMIT", 10)
    stream = io.BytesIO(b'{"a": 1}\n' + b"x" * 35 + b"\n" + b'{"b": 2}\nlast')
    lines = [transport._bounded_line(stream) for _ in range(5)]
    assert lines == [b'{"a": 1}\n', b"\0\n", b'{"b": 2}\n', b"last", b""]


async def test_the_stdin_thread_reads_every_line_then_ends_at_the_end() -> None:
    import io
    import threading

    from cave_tui.frontends.mcp.transport import ThreadLines

    before = set(threading.enumerate())
    lines = [line async for line in ThreadLines(io.BytesIO(b'{"a": 1}\n{"b": 2}'))]
    assert lines == ['{"a": 1}\n', '{"b": 2}']
    (reader,) = set(threading.enumerate()) - before or {None}
    if reader is not None:
        reader.join(5)
        assert not reader.is_alive(), "the reader thread went on after the end of stdin"
