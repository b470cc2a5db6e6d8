"""Ctrl+C during `/inject` in the real `cave --plain` (in a pty): cancelled, nothing injected."""

from __future__ import annotations

import json

import pexpect

from tests.reliability.real_cave import CAVE, env, script

PROMPT = "cave›"


def test_ctrl_c_mid_inject_cancels_it_and_the_prompt_comes_back(tmp_path):
    # About 3 s to load: progress shows after 1 s (console_front_end.py), then Ctrl+C stops it.
    with open(tmp_path / "big.csv", "wb") as f:
        f.write(b"a,b,c\n" + b"1,2.5,x\n" * 24_000_000)
    model = script(tmp_path / "m.yaml", ["hi"])
    child = pexpect.spawn(
        CAVE,
        ["--plain", "--model", model, "--sessions-dir", "s"],
        cwd=str(tmp_path),
        env=env(tmp_path, PROMPT_TOOLKIT_NO_CPR="1"),  # pexpect answers no cursor queries
        encoding="utf-8",
        timeout=60,
        dimensions=(40, 200),
    )
    try:
        child.expect(PROMPT)
        child.sendline("/inject big.csv")
        child.expect("reading big.csv")  # progress: the load is under way
        child.sendintr()
        child.expect("Cancelled: big.csv was not injected.")
        child.expect(PROMPT)
        child.sendline("/vars")
        child.expect("No variables yet.")
        child.sendline("!print(6 * 7)")
        child.expect("42")
        child.sendline("/quit")
        child.expect(pexpect.EOF)
        transcript = child.before
    finally:
        child.close(force=True)
    assert child.exitstatus == 0 and "Traceback" not in transcript
    (folder,) = (tmp_path / "s").iterdir()
    kinds = [json.loads(x)["type"] for x in (folder / "events.jsonl").read_text().splitlines()]
    assert "injection" not in kinds and kinds[-1] == "closed"
