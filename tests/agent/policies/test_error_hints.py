"""ErrorHints: one-line hints after a failed cell."""

from cave_tui.agent.observation import FORMAT_MANY_HINT, error_hints
from cave_tui.runtime.base import ExecutionResult


def test_a_column_no_frame_has_gets_the_merge_that_would_bring_it():
    missing = ExecutionResult(
        success=False, error="KeyError: 'Column not found: airline'", error_type="KeyError"
    )
    frames = {
        "flights": {"carrier": "str", "dest": "str"},
        "airlines": {"carrier": "str", "name": "str"},
    }
    code = "flights.groupby('carrier')['airline'].size()"
    assert error_hints(code, missing, frames) == [
        "There is no column 'airline' in flights. To use the columns of airlines (name), merge "
        "first: flights.merge(airlines, on='carrier'), then use 'name'."
    ]
    # No frame shares a column with the one used: its columns are listed.
    assert error_hints("airlines['airline']", missing, {"airlines": {"carrier": "str"}}) == [
        "There is no column 'airline' in airlines; its columns: carrier."
    ]


def test_a_missing_key_subscripted_on_a_frame_is_a_column_not_a_row():
    missing = ExecutionResult(success=False, error="KeyError: 'airline'", error_type="KeyError")
    frames = {"merged": {"carrier": "str", "name": "str"}, "airports": {"faa": "str"}}
    assert error_hints("merged['airline'].value_counts()", missing, frames) == [
        "There is no column 'airline' in merged; its columns: carrier, name."
    ]
    assert error_hints("flights.merge(a, on='c')['airline']", missing, frames) == [
        "There is no column 'airline': the Namespace lists each frame's columns."
    ]
    # `.loc['HNL']` and a dict's key stay row / lookup hints.
    row = ExecutionResult(success=False, error="KeyError: 'HNL'", error_type="KeyError")
    assert "index label of airports" in error_hints("airports.loc['HNL']", row, frames)[0]
    assert "index label here" in error_hints("d['HNL']", row, frames)[0]


async def test_formatting_a_series_as_one_number_is_named(runtime):
    code = "ua = flights['dep_delay'] * 2\nf'{ua:.2f}'"
    result = await runtime.execute(code)
    assert error_hints(code, result, {}) == [FORMAT_MANY_HINT]
