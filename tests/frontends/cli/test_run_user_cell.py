"""Issue 31, item 8: `cave run "!CODE"` runs CODE as the user's own cell (as `!` lines run in
the app): its output printed, recorded as a user cell, no model asked; no model is needed."""

from __future__ import annotations

import json
from pathlib import Path

from tests.reliability.real_cave import cave, script


def _events(tmp_path: Path) -> list[dict[str, object]]:
    (log,) = (tmp_path / "sessions").glob("*/events.jsonl")
    return [json.loads(line) for line in log.read_text().splitlines()]


def test_a_bang_task_runs_the_cell_and_never_asks_the_model(tmp_path):
    (tmp_path / "sales.csv").write_text("region,amount\nnorth,17\nsouth,25\n")
    model = script(tmp_path / "replies.yaml", ["The total is 9999 (INVENTED)."])
    task = '!print("total", sales["amount"].sum())'
    done = cave(
        "run", task, "--in-process", "--inject", "sales.csv:sales", "--model", model, cwd=tmp_path
    )
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "total 42" in done.stdout
    assert "INVENTED" not in done.stdout + done.stderr  # the scripted model was never asked
    events = _events(tmp_path)
    cells = [e for e in events if e.get("agent") == "user"]
    assert [e["type"] for e in cells] == ["code", "execution_output"]
    assert cells[0]["code"] == 'print("total", sales["amount"].sum())'
    assert not [e for e in events if e.get("agent") not in (None, "user")]  # no model's turn


def test_a_bang_task_needs_no_model_and_a_failing_cell_exits_2(tmp_path):
    done = cave("run", "!print(undefined_name)", "--in-process", cwd=tmp_path)
    assert done.returncode == 2, (done.stdout, done.stderr)
    assert "NameError" in done.stdout and "undefined_name" in done.stdout
    assert "no model" not in (done.stdout + done.stderr).lower()
