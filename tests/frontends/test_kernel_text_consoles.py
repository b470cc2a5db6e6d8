"""`cave --plain` (in a pty) and `cave run` (a subprocess): the bytes they write hold no
terminal control from the kernel's strings (an answer, a repr, a name, a cell, an error)."""

from __future__ import annotations

import io
import subprocess
from pathlib import Path

import pexpect

from tests.reliability.real_cave import CAVE, code, env, script

SETUP = r"""import pandas as pd
E = '\x1b]0;PWNED\x07'
C = '\x1b]52;c;cm0gLXJmIH4K\x07'
Z = '\x9b2J\x9d0;EIGHT\x9c'
globals()['bad' + E] = 1
K = type('Cls' + E, (), {'__repr__': lambda self: 'rep' + E + C + Z})
obj = K()
frame = pd.DataFrame({'[/]': [1, 2], 'weight [kg]': [3.5, 4.5], 's': ['cell' + E, 'x' + C + Z]})
print('printed' + E + C + Z, obj)
raise ValueError('boom' + E + C + Z)"""
REPLIES = [
    "Setting up\x1b]0;PROSE\x07 now.\n\n" + code(SETUP),
    code("final_answer('answer' + E + C + Z + ' [/] end')"),
]
# OSC and BEL (7-bit), and the C1 controls as UTF-8 (8-bit CSI, OSC, DCS, ST …).
FORBIDDEN = [b"\x1b]", b"\x07", *(bytes([0xC2, c]) for c in range(0x80, 0xA0))]
PROMPT = "cave›".encode()
ARGS = ["--in-process", "--policy", "trusted", "--sessions-dir", "s"]


def raw_controls(out: bytes) -> list[bytes]:
    return [seq for seq in FORBIDDEN if seq in out]


def test_plain_shows_kernel_text_without_its_escape_sequences(tmp_path: Path):
    model = script(tmp_path / "m.yaml", REPLIES)
    child = pexpect.spawn(
        CAVE,
        ["--plain", "--model", model, *ARGS],
        cwd=str(tmp_path),
        env=env(tmp_path, PROMPT_TOOLKIT_NO_CPR="1"),  # pexpect answers no cursor queries
        timeout=60,
        dimensions=(50, 160),
    )
    child.logfile_read = out = io.BytesIO()
    try:
        child.expect(PROMPT)
        child.sendline("set it up")
        child.expect(rb"\[/\] end[^']")  # the answer's end (not the code's)
        child.expect(PROMPT)
        child.sendline("/show frame")
        child.expect_exact(b"weight [kg]")
        child.expect(PROMPT)
        child.sendline("/show obj")
        child.expect_exact(b"rep")
        child.expect(PROMPT)
        child.sendline("/vars")
        child.expect_exact(b"bad")
        child.expect(PROMPT)
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    written = out.getvalue()
    assert child.exitstatus == 0, written
    assert not raw_controls(written), written
    for shown in (b"answer [/] end", b"printed", b"boom", b"cell", b"[/]", b"Cls"):
        assert shown in written


def test_cave_run_prints_kernel_text_without_its_escape_sequences(tmp_path: Path):
    model = script(tmp_path / "m.yaml", REPLIES)
    run = subprocess.run(
        [CAVE, "run", "set it up", "--model", model, *ARGS],
        cwd=tmp_path,
        env=env(tmp_path),
        capture_output=True,
        timeout=90,
    )
    assert run.returncode == 0, run.stderr
    assert not raw_controls(run.stdout) and not raw_controls(run.stderr), run.stdout
    assert b"answer [/] end" in run.stdout and b"printed" in run.stdout and b"boom" in run.stdout
    assert b"\x1b" not in run.stdout  # not a terminal: no styles either
    # --json: the kernel's strings are data, escaped by JSON, never raw bytes.
    as_json = subprocess.run(
        [CAVE, "run", "set it up", "--json", "--model", model, *ARGS],
        cwd=tmp_path,
        env=env(tmp_path),
        capture_output=True,
        timeout=90,
    )
    assert as_json.returncode == 0, as_json.stderr
    assert b"\\u001b]0;PWNED\\u0007" in as_json.stdout
    assert b"\x1b" not in as_json.stdout and not raw_controls(as_json.stdout)
