"""A turn that ends with `final_answer(...)` shows its answer in every front end.

The answer of such a turn is never streamed as prose (it is printed by the cell), so
each front end must render the `FinalResponseEvent` itself: the app, `cave --plain`,
`cave run` (text and `--json`) and the library's `display=True`.
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
from cave_tui.frontends.tui.widgets.chat import Answer
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime, Variable
from tests.frontends.repl.test_plain import run_lines

from .conftest import chat_text, make_app, settle, submit

CAVE = str(Path(sys.executable).with_name("cave"))
COUNT = "```python\nn = len(flights)\nfinal_answer(f'There are {n:,} flights in the table.')\n```"
ANSWER = "There are 1,234 flights in the table."


def _flights(folder: Path) -> Path:
    path = folder / "flights.parquet"
    pd.DataFrame({"dep_delay": range(1234)}).to_parquet(path)
    return path


def test_cave_run_prints_the_answer(tmp_path):
    _flights(tmp_path)
    (tmp_path / "m.yaml").write_text(yaml.safe_dump([COUNT]))
    args = [CAVE, "run", "count", "--model", f"scripted:{tmp_path / 'm.yaml'}",
            "--inject", "flights.parquet"]  # fmt: skip
    result = subprocess.run(args, cwd=tmp_path, capture_output=True, text=True, timeout=90)
    assert result.returncode == 0, result.stderr
    assert ANSWER in result.stdout
    # The code's own output (the marker) is not shown as output.
    assert "cave-final" not in result.stdout
    assert result.stdout.index(ANSWER) < result.stdout.index("completed")
    result = subprocess.run([*args, "--json"], cwd=tmp_path, capture_output=True, text=True,
                            timeout=90)  # fmt: skip
    final = [json.loads(x) for x in result.stdout.splitlines() if '"final_response"' in x]
    assert final and final[-1]["content"] == ANSWER and final[-1]["source"] == "final_answer"


async def test_plain_prints_the_answer(tmp_path):
    text, _services = await run_lines(
        [f"/inject {_flights(tmp_path)} as flights", "count the flights", "/quit"], [COUNT]
    )
    assert ANSWER in text
    assert text.count(ANSWER) == 1


async def test_app_shows_the_answer_in_the_chat(tmp_path):
    app = make_app([COUNT])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        path = _flights(tmp_path)
        await submit(pilot, f"!import pandas as pd; flights = pd.read_parquet('{path}')")
        await submit(pilot, "count the flights")
        answers = list(app.chat.query(Answer))
        assert [a.text for a in answers] == [ANSWER]
        assert chat_text(app).count(ANSWER) == 1


async def test_a_prose_answer_is_not_shown_twice():
    out = io.StringIO()
    display = RichDisplay(Console(file=out, width=100, color_system=None))
    agent = CaveAgent(ScriptedModel(["The table has **3** rows."]), IPythonRuntime())
    async for event in agent.stream_events("how many rows?"):
        display.render(event)
        if event.type is ev.EventType.FINAL_RESPONSE:
            assert isinstance(event, ev.FinalResponseEvent) and not event.unseen
    assert out.getvalue().count("The table has 3 rows.") == 1


async def test_library_display_shows_the_answer():
    out = io.StringIO()
    display = RichDisplay(Console(file=out, width=100, color_system=None))
    runtime = IPythonRuntime(variables=[Variable("flights", list(range(1234)), "a list")])
    agent = CaveAgent(ScriptedModel([COUNT]), runtime)
    async for event in agent.stream_events("count"):
        display.render(event)
    assert ANSWER in out.getvalue()
