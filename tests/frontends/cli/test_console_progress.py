"""`cave run` and `--plain` show a load's progress as a Rich progress line on a terminal and
nothing when their output is piped (issue 34, item 4)."""

from __future__ import annotations

import asyncio
import io

from rich.console import Console

from cave_tui.app.config import Config
from cave_tui.app.services import AppServices
from cave_tui.dataio.progress import Progress
from cave_tui.frontends.cli.front_end import CliFrontEnd

REPORT = Progress(3_000, 8_000, "rows", "reading", "/data/flights.csv", elapsed=5.0)


def _front_end(terminal: bool) -> tuple[CliFrontEnd, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    front_end = CliFrontEnd(
        AppServices(Config(kernel=False)),
        console=Console(file=out, force_terminal=terminal, width=100),
        errors=Console(file=err, force_terminal=terminal, width=100),
    )
    return front_end, out, err


def test_piped_cave_run_prints_no_progress_line():
    front_end, out, err = _front_end(terminal=False)
    for done in (1_000, 3_000, 6_000):
        front_end.progress(Progress(done, 8_000, "rows", "reading", "/d/f.csv", 5.0), "f.csv")
    asyncio.run(front_end.drain())
    assert out.getvalue() == "" and err.getvalue() == ""


def test_on_a_terminal_a_rich_progress_line_shows_the_rows_and_goes_away():
    front_end, out, err = _front_end(terminal=True)
    front_end.progress(REPORT, "flights.csv")
    live = front_end.progress_lines._live
    assert live is not None
    live.refresh()
    shown = err.getvalue()
    assert "reading flights.csv" in shown and "3,000 of 8,000 rows" in shown and "38%" in shown
    assert out.getvalue() == ""  # stdout holds results only
    asyncio.run(front_end.drain())
    assert front_end.progress_lines._live is None  # stopped: the line is gone (transient)
