"""`cave run "/cmd"` prints one truthful outcome (issue 31, item 9)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

CAVE = str(Path(sys.executable).with_name("cave"))


def _cave(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([CAVE, *args], cwd=cwd, capture_output=True, text=True, timeout=120)


def test_compact_with_nothing_to_compact_says_only_that(tmp_path):
    (tmp_path / "replies.yaml").write_text('- "unused"\n')
    done = _cave("run", "--model", "scripted:replies.yaml", "/compact", cwd=tmp_path)
    out = (done.stdout + done.stderr).lower()
    assert "nothing to compact yet" in out, out
    assert "compacted" not in out.replace("nothing to compact", ""), out


def test_retrieve_of_a_missing_name_suggests_the_names_that_contain_it(tmp_path):
    (tmp_path / "nosuch_frame_2024.csv").write_text("a,b\n1,2\n")
    done = _cave("run", "--inject", "nosuch_frame_2024.csv", "/retrieve nosuch", cwd=tmp_path)
    out = " ".join((done.stdout + done.stderr).split())  # the terminal may wrap it
    assert done.returncode != 0 and "no variable named 'nosuch'" in out, out
    assert "did you mean nosuch_frame_2024?" in out, out
    assert not (tmp_path / "nosuch_frame_2024.parquet").exists()


async def test_a_missing_name_with_none_close_lists_what_the_runtime_holds():
    from cave_tui.runtime.ipython import IPythonRuntime

    runtime = IPythonRuntime()
    try:
        await runtime.execute("penguins = 1\nflights = 2")
        with pytest.raises(KeyError, match="it holds flights, penguins"):
            await runtime.retrieve("zzz")
    finally:
        await runtime.stop()
