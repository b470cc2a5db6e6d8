"""Issue 31, item 9: what `cave run` and `cave replay` print keeps its shape. A DataFrame or
Series given to final_answer() prints as its table's lines, not joined into one paragraph;
a code line wider than the terminal wraps, never cut at its edge."""

from __future__ import annotations

from pathlib import Path

from tests.reliability.real_cave import cave, code, script

LONG = "label = " + " + ".join(f"'part{i}'" for i in range(24)) + "  # THE-END"
ANSWER = (
    "frame = pd.DataFrame({'carrier': ['UA', 'AA'], 'mean_delay': [12.5, 8.25]})\n"
    "final_answer(frame)"
)


def _shown(out: str) -> str:
    """The printed text without panel borders or line breaks (a wrapped line joined up)."""
    return "".join(line.strip("│ ") for line in out.splitlines())


def test_a_frame_answer_keeps_its_rows_and_long_code_wraps(tmp_path: Path) -> None:
    model = script(tmp_path / "r.yaml", [code(f"import pandas as pd\n{LONG}"), code(ANSWER)])
    done = cave(
        "run", "t", "--in-process", "--model", model, cwd=tmp_path, extra_env={"COLUMNS": "60"}
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    replayed = cave("replay", "last", "--headless", cwd=tmp_path, extra_env={"COLUMNS": "60"})
    assert replayed.returncode == 0, (replayed.stdout, replayed.stderr)
    for out in (done.stdout, replayed.stdout):
        rows = [line.split() for line in out.splitlines()]
        assert ["carrier", "mean_delay"] in rows, out  # the header on a line of its own
        header = rows.index(["carrier", "mean_delay"])
        assert rows[header + 1 : header + 3] == [["0", "UA", "12.50"], ["1", "AA", "8.25"]]
        assert "'part23'  # THE-END" in _shown(out)  # the whole line, wrapped
