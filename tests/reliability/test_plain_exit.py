"""`cave --plain` (in a pty) stuck saving a value whose `__getstate__` never returns as it
quits (issue 29, item 5): Ctrl+C leaves at once, echo is on, the session record is closed."""

from __future__ import annotations

import json
import time

import pexpect

from tests.reliability.real_cave import CAVE, env, script

PROMPT = "cave›"
HEAVY = (
    '!exec("class Sticky:\\n def __getstate__(self):\\n  while True: pass\\n'
    'heavy = [bytearray(10 << 20), Sticky()]")'
)


def test_ctrl_c_while_quitting_is_stuck_saving_leaves_at_once(tmp_path):
    model = script(tmp_path / "m.yaml", ["hi"])
    child = pexpect.spawn(
        CAVE,
        ["--plain", "--in-process", "--policy", "trusted", "--model", model,
         "--sessions-dir", "s", "--dump", "out"],
        cwd=str(tmp_path),
        env=env(tmp_path, PROMPT_TOOLKIT_NO_CPR="1"),
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )  # fmt: skip
    try:
        child.expect(PROMPT)
        child.sendline(HEAVY)
        child.expect(PROMPT)
        child.sendline("/quit")
        time.sleep(2)  # into the exit dump's write of `heavy`
        assert child.isalive()
        started = time.monotonic()
        child.sendintr()
        child.expect(pexpect.EOF, timeout=30)
        took = time.monotonic() - started
        transcript = " ".join(child.before.split())
    finally:
        child.close(force=True)
    print(f"left {took:.1f} s after Ctrl+C")
    assert took <= 10, took
    assert child.exitstatus == 130, transcript
    assert "left at once" in transcript and "the dump to out was not written" in transcript
    assert "Traceback" not in transcript
    (folder,) = (tmp_path / "s").iterdir()
    assert json.loads((folder / "meta.json").read_text())["status"] != "running"
    assert not (tmp_path / "out").exists()
