"""WrongType: a result of another type than the request names."""

import pandas as pd

from cave_tui.agent import CaveAgent
from cave_tui.agent.policies.wrong_type import type_note, wrong_types
from cave_tui.models import ScriptedModel
from cave_tui.runtime.shipped.summary import summarize


def test_a_result_of_another_type_than_the_request_names_is_found():
    values = {
        "n": True,
        "k": 12,
        "frame": pd.DataFrame({"a": [1]}),
        "pair": ["JFK", "ORD"],
        "x": 2.5,
    }
    rows = [summarize(name, value) for name, value in values.items()]
    ask = (
        "Store the int in `n`. Store the number in `x`. Store a Series in `frame`; "
        "store it as a tuple in `pair`. Keep `k` as an integer."
    )
    found = wrong_types(list(values), rows, ask, stored=set(values))
    assert [(name, got, asked) for name, got, asked, _ in found] == [
        ("n", "bool", "int"),
        ("frame", "DataFrame", "Series"),
        ("pair", "list", "tuple"),
    ]
    assert type_note(found[0]) == (
        "`n` is a bool (True), but the request asks for an int. To count where a condition "
        "holds: int((condition).sum()). Store an int in `n`, then call final_answer."
    )
    # Inputs (there before the turn) and names not stored this turn are never questioned;
    # "the number of" and a sentence naming two types name none.
    assert wrong_types(["n"], rows, ask, stored={"n"}, before={"n"}) == []
    assert wrong_types(["n"], rows, ask, stored=set()) == []
    assert wrong_types(["n"], rows, "Store the number of rows in `n`.", stored={"n"}) == []
    assert wrong_types(["n"], rows, "Store the int or list in `n`.", stored={"n"}) == []


async def test_a_bool_stored_where_a_count_was_asked_is_questioned(runtime):
    compare = "```python\nn = len(flights) > 2\nfinal_answer(str(n))\n```"
    count = "```python\nn = int((flights['dep_delay'] > 6).sum())\nfinal_answer(str(n))\n```"
    model = ScriptedModel([compare, count])
    response = await CaveAgent(model, runtime, policies="wrong_type").run(
        "Store the int in `n`: delays over 6."
    )
    assert (
        "`n` is a bool (True), but the request asks for an int" in model.requests[1][-1]["content"]
    )
    assert response.content == "2" and await runtime.retrieve("n") == 2
