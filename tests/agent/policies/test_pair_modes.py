"""PairModes: each column's mode given for the most frequent pair."""

from cave_tui.agent import CaveAgent
from cave_tui.agent.policies.pair_modes import pair_note, separate_modes
from cave_tui.models import ScriptedModel


def test_each_columns_mode_given_for_a_pair_is_found():
    apart = "top = (flights['origin'].value_counts().idxmax(), flights['dest'].mode()[0])"
    ask = "Which origin-destination pair has the most flights? Store it in `top`."
    assert separate_modes(apart, ask) == ("flights", ["origin", "dest"])
    assert "flights.groupby(['origin', 'dest']).size().idxmax()" in pair_note(
        "flights", ["origin", "dest"]
    )
    # Not about a pair, or the pair counted together: nothing to say.
    assert separate_modes(apart, "Which origin is busiest, and which destination?") is None
    together = "top = tuple(flights.groupby(['origin', 'dest']).size().idxmax())"
    assert separate_modes(together, ask) is None


async def test_a_pair_of_separate_modes_is_questioned_once(runtime):
    apart = (
        "```python\ntop = (flights['carrier'].mode()[0], flights['dep_delay'].mode()[0])\n"
        "final_answer(str(top))\n```"
    )
    model = ScriptedModel([apart, apart])
    response = await CaveAgent(model, runtime).run(
        "Which carrier-delay pair is most common? Store it in `top`."
    )
    assert (
        "Count the combinations (flights.groupby(['carrier', 'dep_delay'])"
        in (model.requests[1][-1]["content"])
    )
    assert response.steps == 2  # the second answer is taken as it is
