"""Issue 31 items 2 and 3 through the app in tmux: a failing `groupby` on a missing column
gets a hint naming the real columns, and the prose answer that follows the failed cell
is marked as not supported by a successful cell."""

from __future__ import annotations

import shutil

import pytest

from .test_e2e_tmux import CAVE, tmux  # noqa: F401 (the fixture)

pytestmark = [
    pytest.mark.e2e,
    pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed"),
]

FLIGHTS = "carrier,origin,dep_delay\nAA,EWR,1.0\nUA,JFK,5.0\n"
REPLIES = """\
- "```python\\nflights.groupby('nosuch')['dep_delay'].mean()\\n```"
- "EWR is the airline with the worst delay."
"""


def test_a_failed_cell_gets_the_real_columns_and_the_next_prose_is_marked(tmux, tmp_path):  # noqa: F811
    (tmp_path / "flights.csv").write_text(FLIGHTS)
    script = tmp_path / "replies.yaml"
    script.write_text(REPLIES)
    tmux.start(
        [str(CAVE), "--model", f"scripted:{script}", "--inject", "flights.csv"],
        width=160,
        height=50,
    )
    tmux.wait_for("Recording session", timeout=60)  # the runtime is up, the data injected
    tmux.keys("-l", "which airline has the worst delay?")
    tmux.wait_for("│ which airline has the worst delay?")
    tmux.keys("Enter")
    screen = tmux.wait_for("EWR is the airline with the worst delay.")
    screen = tmux.wait_for("not supported by a successful cell")
    flat = " ".join(screen.replace("│", " ").split())  # a wrapped line, without the borders
    assert "KeyError" in flat, screen
    assert "[error_hints hint]" in flat, screen
    hint = flat[flat.index("[error_hints hint]") :]
    assert hint.startswith(  # the real columns, no row filter by that value
        "[error_hints hint] There is no column 'nosuch' in flights; its columns: carrier, "
        "origin, dep_delay."
    ), screen
    tmux.keys("C-q")
    tmux.wait_for("CAVE-EXIT=0")
