"""Issue 31, item 9: `cave run --json` names its session first and ends with a `status` line,
and a text event's `content` is its text; a run of a slash command alone records no session
(it never becomes `last`), while a `!` cell run does."""

from __future__ import annotations

import json
from pathlib import Path

from tests.reliability.real_cave import cave, code, script


def _sessions(tmp_path: Path) -> list[Path]:
    root = tmp_path / "sessions"
    return sorted(p for p in root.iterdir() if p.is_dir()) if root.is_dir() else []


def test_json_names_the_session_ends_with_a_status_and_text_has_content(tmp_path: Path) -> None:
    model = script(tmp_path / "r.yaml", [f"Let me add.\n{code('print(1 + 1)')}", "It is 2."])
    done = cave("run", "t", "--json", "--in-process", "--model", model, cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    lines = [json.loads(line) for line in done.stdout.splitlines()]
    (session,) = _sessions(tmp_path)
    assert lines[0] == {"type": "session", "session": session.name, "dir": str(session)}
    assert lines[-1] == {"type": "status", "status": "completed", "exit_code": 0}
    texts = [e for e in lines if e["type"] == "text"]
    assert all(e["content"] for e in texts), texts
    written = "".join(e["content"] for e in texts)
    assert "Let me add." in written and "print(1 + 1)" in written and "It is 2." in written


def test_a_failed_json_run_ends_with_its_error_status(tmp_path: Path) -> None:
    done = cave("run", "!print(undefined_name)", "--json", "--in-process", cwd=tmp_path)
    assert done.returncode == 2
    last = json.loads(done.stdout.splitlines()[-1])
    assert last == {"type": "status", "status": "error", "exit_code": 2}


def test_a_slash_command_run_records_no_session_but_a_cell_run_does(tmp_path: Path) -> None:
    done = cave("run", "!x = 41 + 1", "--in-process", cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    (cell_session,) = _sessions(tmp_path)
    done = cave("run", "/help", "--in-process", cwd=tmp_path)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert _sessions(tmp_path) == [cell_session]  # `last` is still the cell's session
    assert "session " not in done.stderr
