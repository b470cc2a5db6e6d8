"""`cave run` piped prints no progress line (issue 34, item 4): a file big enough to load in
chunks (past `SMALL_FILE`, so its load reports progress) injected at the start and a dump
at exit leave only the results on stdout and the messages on stderr."""

from __future__ import annotations

from cave_tui.dataio.load import SMALL_FILE
from tests.reliability.real_cave import cave

ROW = ",".join(["1234567890"] * 40) + "\n"


def test_cave_run_piped_prints_no_progress_line(tmp_path):
    rows = SMALL_FILE // len(ROW) + 1_000
    header = ",".join(f"c{i}" for i in range(40)) + "\n"
    (tmp_path / "wide.csv").write_text(header + ROW * rows)
    done = cave(
        "run",
        "!print('rows', len(wide))",
        "--in-process",
        "--inject",
        "wide.csv:wide",
        "--dump",
        "out",
        cwd=tmp_path,
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"rows {rows}" in done.stdout
    assert "dumped" in done.stderr + done.stdout
    for text in (done.stdout, done.stderr):
        assert "reading wide.csv" not in text and "writing" not in text
        assert "━" not in text and "\r" not in text and "\x1b" not in text
