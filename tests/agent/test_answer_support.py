"""An answer no successful cell of its turn supports is marked, in the event, the response,
every front end and the session record; it is never withheld or delayed.

Seen in issue 31: after a cell failed with KeyError, the next reply (no code run) named an
airport as "the airline with the worst delay", and the turn ended as a normal answer.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
from pathlib import Path

import pandas as pd
import yaml
from rich.console import Console

from cave_tui import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.display import RichDisplay
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable
from cave_tui.session import export_session, replay_session
from cave_tui.session.transcript import transcript
from tests.frontends.repl.test_plain import run_lines

CAVE = str(Path(sys.executable).with_name("cave"))
FAILS = "```python\nflights.groupby('airline')['dep_delay'].mean()\n```"
WORKS = "```python\nworst = flights.groupby('carrier')['dep_delay'].mean().idxmax()\n```"
ANSWERS = "```python\nfinal_answer(flights.groupby('carrier')['dep_delay'].mean().idxmax())\n```"
MADE_UP = "EWR is the airline with the worst delay."
TASK = "which airline has the worst delay?"


def _flights() -> pd.DataFrame:
    return pd.DataFrame(
        {"carrier": ["AA", "UA", "AA"], "origin": ["JFK", "EWR", "LGA"], "dep_delay": [1.0, 5, 3]}
    )


def _agent(replies: list[str]) -> CaveAgent:
    runtime = IPythonRuntime(variables=[Variable("flights", _flights(), "flights")])
    return CaveAgent(ScriptedModel(replies), runtime, policies="minimal")


async def _turn(replies: list[str]) -> tuple[list[ev.Event], str]:
    """The turn's events, and what RichDisplay (`--plain`, `cave run`, replay) showed."""
    out = io.StringIO()
    display = RichDisplay(Console(file=out, width=200, color_system=None))
    events = []
    async for event in _agent(replies).stream_events(TASK):
        display.render(event)
        events.append(event)
    return events, out.getvalue()


def _final(events: list[ev.Event]) -> ev.FinalResponseEvent:
    finals = [e for e in events if isinstance(e, ev.FinalResponseEvent)]
    assert len(finals) == 1
    return finals[0]


async def test_a_prose_answer_after_a_failed_cell_is_marked_not_withheld():
    events, shown = await _turn([FAILS, MADE_UP])
    final = _final(events)
    assert final.content == MADE_UP  # given as it came, on time
    assert final.support is ev.AnswerSupport.NONE and final.unsupported
    response = await _agent([FAILS, MADE_UP]).run(TASK)
    assert response.completed and response.content == MADE_UP
    assert response.support is ev.AnswerSupport.NONE
    assert MADE_UP in shown and ev.UNSUPPORTED_MARK in shown  # --plain, cave run, replay
    assert shown.index(MADE_UP) < shown.index(ev.UNSUPPORTED_MARK)
    # The session record keeps it: the transcript (resume, /load) reads it back.
    (restored,) = transcript([final.to_dict()])
    assert isinstance(restored, ev.FinalResponseEvent) and restored.unsupported


async def test_an_answer_after_a_success_following_the_failure_is_not_marked():
    events, shown = await _turn([FAILS, WORKS, "AA: its mean delay is the worst."])
    assert _final(events).support is ev.AnswerSupport.CELL
    assert ev.UNSUPPORTED_MARK not in shown


async def test_a_success_then_a_failure_then_prose_is_marked():
    events, shown = await _turn([WORKS, FAILS, MADE_UP])
    assert _final(events).unsupported
    assert ev.UNSUPPORTED_MARK in shown


async def test_final_answer_from_a_cell_that_succeeded_and_a_reply_without_code():
    events, shown = await _turn([FAILS, ANSWERS])
    assert _final(events).support is ev.AnswerSupport.CELL
    assert ev.UNSUPPORTED_MARK not in shown
    events, shown = await _turn(["Hello! Ask me about `flights`."])
    assert _final(events).support is ev.AnswerSupport.NO_CODE
    assert ev.UNSUPPORTED_MARK not in shown


async def test_cave_run_json_and_its_replay_carry_the_mark(tmp_path):
    _flights().to_parquet(tmp_path / "flights.parquet")
    (tmp_path / "m.yaml").write_text(yaml.safe_dump([FAILS, MADE_UP]))
    args = [CAVE, "run", TASK, "--model", f"scripted:{tmp_path / 'm.yaml'}", "--json",
            "--inject", "flights.parquet", "--sessions-dir", "s"]  # fmt: skip
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    final = [json.loads(x) for x in result.stdout.splitlines() if '"final_response"' in x]
    assert final and final[-1]["content"] == MADE_UP and final[-1]["support"] == "none"
    # The session's record holds the mark too.
    (log,) = (tmp_path / "s").rglob("events.jsonl")
    records = [json.loads(x) for x in log.read_text().splitlines()]
    assert [r["support"] for r in records if r.get("type") == "final_response"] == ["none"]
    # The notebook and script exports keep it under the answer.
    notebook = json.loads(export_session(log.parent, tmp_path / "t.ipynb").read_text())
    texts = ["".join(cell["source"]) for cell in notebook["cells"]]
    answer = next(i for i, t in enumerate(texts) if MADE_UP in t)
    assert ev.UNSUPPORTED_MARK in "".join(texts[answer + 1 : answer + 2])
    script = export_session(log.parent, tmp_path / "t.py").read_text()
    assert script.index(MADE_UP) < script.index(ev.UNSUPPORTED_MARK)
    # `cave replay` runs the recorded turn again and shows the mark as it was.
    out = io.StringIO()
    display = RichDisplay(Console(file=out, width=200, color_system=None))
    result = await replay_session(log.parent, render=display.render, pause=0)
    assert not result.divergences
    assert MADE_UP in out.getvalue() and ev.UNSUPPORTED_MARK in out.getvalue()


async def test_plain_shows_the_mark(tmp_path):
    path = tmp_path / "flights.parquet"
    _flights().to_parquet(path)
    lines = [f"!import pandas as pd; flights = pd.read_parquet('{path}')", TASK, "/quit"]
    text, _services = await run_lines(lines, [FAILS, MADE_UP])
    assert MADE_UP in text and text.count(ev.UNSUPPORTED_MARK) == 1
