"""column_runs: numbered column names listed as runs, so a wide frame fits in a line."""

import pandas as pd

from cave_tui.agent.column_runs import wide_form_note, with_runs
from cave_tui.agent.observation import error_hints, frame_columns
from cave_tui.agent.prompt import describe_namespace
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.shipped.summary import summarize


def test_runs_of_increasing_numbers_are_written_once():
    names = ["date", *(f"sf_h{h:02d}" for h in range(24)), "x1", "x2", "x3", "id"]
    assert [text for text, _ in with_runs(names)] == [
        "date",
        "sf_h00 to sf_h23 (24)",
        "x1",
        "x2",
        "x3",
        "id",
    ]
    assert sum(count for _, count in with_runs(names)) == len(names)
    grid = [f"pixel_{r}_{c}" for r in range(8) for c in range(8)]
    assert with_runs(grid) == [("pixel_0_0 to pixel_7_7 (64)", 64)]
    years = [str(y) for y in range(1960, 2014)]
    assert with_runs(["Country Name", *years]) == [("Country Name", 1), ("1960 to 2013 (54)", 54)]
    shuffled = ["a3", "a1", "a4", "a2", "a5"]  # not increasing: each listed
    assert [text for text, _ in with_runs(shuffled)] == shuffled


def test_a_frame_too_wide_for_its_names_lists_its_runs():
    cols = ["date", *(f"seattle_h{h:02d}" for h in range(24)), *(f"sf_h{h:02d}" for h in range(24))]
    cols += [f"extra_metric_number_{i}_of_many" for i in range(60)]  # past the line's budget
    text = describe_namespace([summarize("temps", pd.DataFrame({c: [1] for c in cols}))])
    line = next(x for x in text.splitlines() if x.startswith("  columns: "))
    assert line.startswith(
        "  columns: date, seattle_h00 to seattle_h23 (24), sf_h00 to sf_h23 (24)"
    )
    assert "extra_metric_number_0_of_many to extra_metric_number_59_of_many (60)" in line


def test_the_missing_column_hint_names_every_column_of_a_wide_frame():
    cols = ["date", *(f"seattle_h{h:02d}" for h in range(24)), *(f"sf_h{h:02d}" for h in range(24))]
    frames = frame_columns([summarize("temps", pd.DataFrame({c: [1] for c in cols}))])
    missing = ExecutionResult(success=False, error="KeyError: 'city'", error_type="KeyError")
    (hint,) = error_hints("temps[temps['city'] == 'SF']", missing, frames)
    assert "date, seattle_h00 to seattle_h23 (24), sf_h00 to sf_h23 (24)" in hint, hint


def test_columns_the_request_names_leave_a_wide_frames_runs_whole():
    cols = ["date", *(f"seattle_h{h:02d}" for h in range(24)), *(f"sf_h{h:02d}" for h in range(24))]
    frames = frame_columns([summarize("temps", pd.DataFrame({c: [1] for c in cols}))])
    missing = ExecutionResult(success=False, error="KeyError: 'city'", error_type="KeyError")
    request = "seattle_h00 to seattle_h23 are Seattle's hours, sf_h00 to sf_h23 SF's; date"
    (hint,) = error_hints("temps[temps['city'] == 'SF']", missing, frames, request=request)
    whole = "its columns: date, seattle_h00 to seattle_h23 (24), sf_h00 to sf_h23 (24)."
    assert whole in hint, hint
    # Cut (many more names): the run holding a named column comes first, whole.
    wide = [*(f"metric_{w}" for w in "abcdefghijklmnopqrstuvwxyz"), *cols]
    frames = frame_columns([summarize("temps", pd.DataFrame({c: [1] for c in wide}))])
    (cut,) = error_hints("temps[temps['city'] == 'SF']", missing, frames, request="use sf_h13")
    assert "its columns: sf_h00 to sf_h23 (24), metric_a, metric_b," in cut, cut
    assert ", …." in cut, cut


def test_a_column_missing_from_a_wide_frame_is_said_to_be_in_its_column_names():
    cols = ["date", *(f"seattle_h{h:02d}" for h in range(24)), *(f"sf_h{h:02d}" for h in range(24))]
    frames = frame_columns([summarize("temps", pd.DataFrame({c: [1] for c in cols}))])
    missing = ExecutionResult(success=False, error="KeyError: 'city'", error_type="KeyError")
    (hint,) = error_hints("temps[temps['city'] == 'SF']", missing, frames, request="use sf_h13")
    assert hint.endswith(
        "temps is wide: seattle_h00 to seattle_h23 (24) and sf_h00 to sf_h23 (24) are columns, "
        "one per value, so there is no 'city' to filter by: select the columns you need, "
        "e.g. temps['sf_h13']."
    ), hint
    years = ["Country Name", *(str(y) for y in range(1960, 2014))]
    assert "there is no 'Year' to filter by" in wide_form_note("Year", "gdp", years)
    assert "e.g. gdp['1960']" in wide_form_note("Year", "gdp", years)
    # Not wide (few numbered columns), or a run's member mistyped: nothing to add.
    assert wide_form_note("city", "t", ["a", "b", "x1", "x2", "x3", "x4", "c", "d"]) == ""
    assert wide_form_note("sf_h24", "temps", cols) == ""
