"""`cave run "/cmd"` prints one truthful outcome (issue 31, item 9)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

CAVE = str(Path(sys.executable).with_name("cave"))


def _cave(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAVE, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_compact_with_nothing_to_compact_says_only_that(tmp_path):
    (tmp_path / "replies.yaml").write_text('- "unused"\n')
    done = _cave("run", "--model", "scripted:replies.yaml", "/compact", cwd=tmp_path)
    out = (done.stdout + done.stderr).lower()
    assert "nothing to compact yet" in out, out
    assert "compacted" not in out.replace("nothing to compact", ""), out
