"""CodeFirst: a request naming a data file is told, until a cell has run, to answer with one
cell that reads it, computes and calls final_answer; opt-in (`small,code_first`): in no preset."""

import pytest

from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies.code_first import CODE_FIRST_TIP, names_data_file

from .helpers import fenced, interventions, run_turn

ASKED = "In /tmp/data/trips.csv, how many rows are there? Answer format: @n[value]."


def _tipped(model, call: int) -> bool:
    return CODE_FIRST_TIP in str(model.requests[call][-1]["content"])


def test_a_path_to_a_data_file_is_what_triggers_it():
    assert names_data_file(ASKED) and names_data_file("Read data/x.parquet and sum it")
    assert not names_data_file("How many rows does `flights` have? Store it in `n`.")
    assert not names_data_file("What is 2.5 times 4?")


async def test_a_request_about_a_file_gets_the_tip_until_a_cell_has_run(runtime):
    replies = ["@n[10]", fenced("print(3)"), "@n[3]"]
    events, model, _ = await run_turn(runtime, replies, ASKED, policies="small,code_first")
    assert ("code_first", InterventionKind.TIP) in interventions(events)
    assert _tipped(model, 0) and _tipped(model, 1)  # the made-up answer was asked again
    assert not _tipped(model, 2)  # a cell has run


@pytest.mark.parametrize("preset", ["guided", "lean", "strict", "small"])
async def test_other_presets_and_requests_without_a_file_get_no_tip(runtime, preset):
    _, model, _ = await run_turn(runtime, [fenced("final_answer(3)")], ASKED, policies=preset)
    assert not _tipped(model, 0)
    _, model, _ = await run_turn(
        runtime,
        [fenced("n = len(flights)\nfinal_answer(n)")],
        "Store the rows in `n`.",
        policies="small,code_first",
    )
    assert not _tipped(model, 0)
