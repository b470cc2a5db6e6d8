"""The app's chat marks an answer no successful cell of its turn supports (issue 31)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from cave_tui.agent import events as ev
from cave_tui.agent.events import UNSUPPORTED_MARK
from cave_tui.session.transcript import transcript

from .conftest import chat_text, make_app, settle, submit

FAILS = "```python\nflights.groupby('airline')['dep_delay'].mean()\n```"
MADE_UP = "EWR is the airline with the worst delay."


async def test_the_chat_marks_a_prose_answer_after_a_failed_cell(tmp_path: Path):
    path = tmp_path / "flights.parquet"
    pd.DataFrame({"carrier": ["AA", "UA"], "dep_delay": [1.0, 5.0]}).to_parquet(path)
    app = make_app([FAILS, MADE_UP, "```python\nm = flights['dep_delay'].max()\n```", "5.0"])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        await submit(pilot, f"!import pandas as pd; flights = pd.read_parquet('{path}')")
        await submit(pilot, "which airline has the worst delay?")
        text = chat_text(app)
        assert MADE_UP in text and text.count(UNSUPPORTED_MARK) == 1
        assert text.index(MADE_UP) < text.index(UNSUPPORTED_MARK)
        await submit(pilot, "what is the largest delay?")  # a cell backs this one
        assert chat_text(app).count(UNSUPPORTED_MARK) == 1


async def test_a_resumed_session_shows_the_mark_it_recorded():
    recorded = ev.FinalResponseEvent(content=MADE_UP, step=2, support=ev.AnswerSupport.NONE)
    records = [{"type": "reply", "step": 2, "text": MADE_UP}, {**recorded.to_dict(), "turn": 1}]
    app = make_app([])
    async with app.run_test(size=(120, 40)) as pilot:
        await settle(pilot)
        app.draw_transcript(transcript(records))  # what resume and /load draw
        await settle(pilot)
        text = chat_text(app)
        assert MADE_UP in text and text.count(UNSUPPORTED_MARK) == 1
