"""Issue 31 (your own `!` cells): `cave run "!print((1)"` and a `!` line in `cave --plain` show
Python's own SyntaxError message and line ("'(' was never closed"), not IPython's "incomplete
input"; in the isolated kernel (the default) and in process. Real `cave` processes."""

from __future__ import annotations

import pexpect

from tests.reliability.real_cave import CAVE, cave, env


def _shows_pythons_message(text: str) -> None:
    assert "SyntaxError: '(' was never closed" in text, text
    assert "print((1)" in text and "line 1" in text
    assert "incomplete input" not in text


def test_cave_run_shows_pythons_syntax_error_from_the_kernel(tmp_path):
    done = cave("run", "!print((1)", cwd=tmp_path)  # the default runtime: the kernel
    assert done.returncode == 2, (done.stdout, done.stderr)
    _shows_pythons_message(done.stdout)


def test_plain_shows_pythons_syntax_error_in_process(tmp_path):
    child = pexpect.spawn(
        CAVE,
        ["--plain", "--in-process"],
        cwd=str(tmp_path),
        env=env(tmp_path, PROMPT_TOOLKIT_NO_CPR="1"),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 120),
    )
    try:
        child.expect("cave›")
        child.sendline("!print((1)")
        child.expect("SyntaxError[^\r\n]*")
        shown = child.before + child.after
        child.sendline("/quit")
        child.expect(pexpect.EOF)
    finally:
        child.close(force=True)
    _shows_pythons_message(shown)
