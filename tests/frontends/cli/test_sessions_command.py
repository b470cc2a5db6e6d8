"""Issue 34, item 5: `cave sessions` lists the recorded sessions (title, date, turns,
variables, model, status; newest first, the last 20 unless --all; --json), hostile titles as
text; `cave run` ends by saying, on stderr, the exact lines that resume its session."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from tests.reliability.real_cave import cave, code, script


def test_cave_run_says_how_to_resume_and_cave_sessions_lists_it(tmp_path: Path) -> None:
    model = script(tmp_path / "m.yaml", [code("x = 41\ny = x + 1"), "y is 42."])
    done = cave("run", "Work out y\nplease", "--in-process", "--model", model, cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "sessions").iterdir()
    assert f"cave: resume this session with: cave --resume {folder.name}\n" in done.stderr
    again = f'cave: or go on with one more task: cave run --resume {folder.name} "NEXT TASK"'
    assert again in done.stderr and "--resume" not in done.stdout

    listed = cave("sessions", "--json", cwd=tmp_path)
    assert listed.returncode == 0, listed.stderr
    data = json.loads(listed.stdout)
    assert data["total"] == 1
    (row,) = data["sessions"]
    assert row["id"] == folder.name and row["title"] == "Work out y"
    assert (row["turns"], row["variables"], row["status"]) == (1, 2, "completed")
    assert row["model"].startswith("scripted") and row["resume"] == f"cave --resume {folder.name}"
    assert row["updated"] == time.strftime(
        "%Y-%m-%dT%H:%M:%S%z", time.localtime(folder.joinpath("events.jsonl").stat().st_mtime)
    )
    text = cave("sessions", cwd=tmp_path).stdout
    assert folder.name in text and "Work out y · 1 turn · 2 variables" in text
    assert f"Resume one with: cave --resume {folder.name}" in text


def test_a_run_elsewhere_names_its_sessions_folder_in_the_resume_line(tmp_path: Path) -> None:
    done = cave("run", "!z = 1", "--in-process", "--sessions-dir", "kept/s", cwd=tmp_path)
    assert done.returncode == 0, done.stderr
    (folder,) = (tmp_path / "kept" / "s").iterdir()
    assert f"cave --resume {folder.name} --sessions-dir {tmp_path / 'kept' / 's'}" in done.stderr
    listed = json.loads(cave("sessions", "--json", "--sessions-dir", "kept/s", cwd=tmp_path).stdout)
    assert [r["title"] for r in listed["sessions"]] == ["!z = 1"]


def test_cave_sessions_is_bounded_and_shows_hostile_titles_as_text(tmp_path: Path) -> None:
    root = tmp_path / "sessions"
    for n in range(23):
        folder = root / f"20250101-0000{n:02d}-s{n}"
        folder.mkdir(parents=True)
        (folder / "events.jsonl").write_text("{}\n")
        title = f"s{n}" if n else "\x1b]52;c;aGk=\x07Evil\x1b[2J [bold]t[/] \u202eok"
        meta = json.dumps({"title": title, "turns": 1}) if n != 3 else "{broken"
        (folder / "meta.json").write_text(meta)
        stamp = time.time() - 100 + (n or 99)  # the hostile one is the newest
        os.utime(folder / "meta.json", (stamp, stamp))
        os.utime(folder / "events.jsonl", (stamp, stamp))

    text = cave("sessions", cwd=tmp_path)
    assert text.returncode == 0, text.stderr
    assert "20 of 23, --all lists all" in text.stdout
    assert sum(line.startswith("20250101-") for line in text.stdout.splitlines()) == 20
    assert "Evil [bold]t[/] ok · 1 turn" in text.stdout
    assert "\x1b" not in text.stdout and "\x07" not in text.stdout
    assert "\u202e" not in text.stdout
    every = json.loads(cave("sessions", "--all", "--json", cwd=tmp_path).stdout)
    assert len(every["sessions"]) == 23 and every["sessions"][0]["title"] == "Evil [bold]t[/] ok"
    (broken,) = [r for r in every["sessions"] if r["id"].endswith("-s3")]
    assert broken["title"] == "s3" and "not valid JSON" in broken["note"]
    assert broken["turns"] is None  # unknown, not 0
