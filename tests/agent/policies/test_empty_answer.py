"""EmptyAnswer: an empty or zero answer is questioned only on evidence of a misspelt value."""

import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies.empty_answer import empty_results
from cave_tui.agent.policies.spelling import misspelt_values
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Variable
from cave_tui.runtime.shipped.summary import summarize
from tests.agent.policies.helpers import fenced, interventions, run_turn


async def test_an_empty_answer_with_a_value_the_data_spells_otherwise_is_questioned_once(runtime):
    penguins = pd.DataFrame({"sex": ["male", "female"] * 3, "mass": [1, 2, 3, 4, 5, 6]})
    runtime.inject(Variable("penguins", penguins, "Penguins"))
    typo = fenced("n = int((penguins['sex'] == 'Male').sum())\nfinal_answer(f'{n}')")
    fixed = fenced("n = int((penguins['sex'] == 'male').sum())\nfinal_answer(f'{n}')")
    events, model, _ = await run_turn(runtime, [typo, fixed], "How many are male? Store `n`.")
    assert events[-1].content == "3" and len(model.requests) == 2
    told = model.requests[1][-1]["content"]
    assert "`n` is empty or zero" in told and "it has 'male'" in told
    assert interventions(events) == [("empty_answer", InterventionKind.DOUBT)]
    # Zero can be the true answer: the second final_answer is taken.
    events, model, _ = await run_turn(runtime, [typo, typo], "How many Male penguins?")
    assert events[-1].content == "0" and len(model.requests) == 2


async def test_a_zero_without_evidence_of_a_misspelling_is_taken_at_once(runtime):
    zero = fenced("n = int((flights['dep_delay'] > 100).sum())\nfinal_answer(f'{n}')")
    events, model, _ = await run_turn(runtime, [zero], "How many flights left over 100 min late?")
    assert events[-1].content == "0" and len(model.requests) == 1
    assert interventions(events) == []


def test_empty_results_know_zero_nan_and_empty_containers():
    values = {
        "zero": 0,
        "nan": float("nan"),
        "none": None,
        "frame": pd.DataFrame({"a": []}),
        "series": pd.Series([], dtype=float),
        "lst": [],
        "text": "",
        "one": 1,
        "full": pd.DataFrame({"a": [1]}),
        "name": "Honolulu Intl",
    }
    rows = [summarize(name, value) for name, value in values.items()]
    assert empty_results(rows, values) == ["zero", "nan", "none", "frame", "series", "lst", "text"]
    assert empty_results(rows, ["one"]) == []  # only the cell's changed names are looked at


def test_values_spelt_unlike_the_request_are_found():
    request = "How many planes made by EMBRAER are in the registry? Store it in `n_embraer`."
    code = "n_embraer = fleet.by_manufacturer('EMBRERAER').shape[0]"
    assert misspelt_values(code, request) == [("EMBRERAER", "EMBRAER")]
    # Same word in another case, a column name, a plural, a short or spaced string: not taken.
    assert misspelt_values("fleet.by_manufacturer('embraer')", request) == []
    assert misspelt_values("df['planes'] + df['registy']", request, known=["registy"]) == []
    assert misspelt_values("df['plane']", request) == []
    assert misspelt_values("x = 'Ab' + 'EMBRAER INC'", request) == []
    assert misspelt_values("not python (", request) == []
    assert misspelt_values("pd.read_csv('planes.csv')", request) == []  # made from a word


async def test_the_empty_answer_note_names_a_misspelt_value(runtime):
    typo = "```python\nn = int((flights['carrier'] == 'Unitd').sum())\nfinal_answer(f'{n}')\n```"
    model = ScriptedModel([typo, "Zero."])
    await CaveAgent(model, runtime).run("How many flights are by United? Store `n`.")
    assert (
        "The code uses 'Unitd'; the request spells it 'United'." in model.requests[1][-1]["content"]
    )


def test_what_the_code_says_is_no_value_it_matches():
    request = "Store in `none` the flights of ZZ (there are none)."
    assert misspelt_values("none = f[f.c == 'ZZ']\nfinal_answer('done')", request) == []
    assert misspelt_values("print('done')\nx = f'{1} done'", request) == []
    assert misspelt_values("none = f[f.c == 'nune']", request) == [("nune", "none")]
