"""GivenTools: a request naming a given function or class gets a reminder to call it."""

from cave_tui.agent.events import InterventionKind
from cave_tui.agent.policies.given_tools import given_tools_named, tools_tip
from cave_tui.runtime import Function, Variable
from tests.agent.policies.helpers import fenced, interventions, run_turn


def season(month: int) -> str:
    """The season of *month* (1-12)."""
    return "winter" if month in (12, 1, 2) else "other"


def test_only_functions_and_classes_the_request_names_are_reminded():
    kinds = {"season": "function", "flights": "variable", "Plane": "type", "helper": "function"}
    given = {"season", "flights", "Plane"}
    ask = "Add `season` to flights by applying season, using Plane."
    assert given_tools_named(ask, given, kinds) == ["season", "Plane"]
    assert given_tools_named("Appliquer season aux mois", given, kinds) == ["season"]
    assert given_tools_named("seasonal flights", given, kinds) == []  # a word, not the name
    assert given_tools_named("use helper", given, kinds) == []  # not given by the user
    assert "call it as it is" in tools_tip(["season"])


async def test_the_tip_reaches_the_request_and_the_user_and_never_stops_a_cell(runtime):
    runtime.inject(Function(season))
    code = fenced("flights['season'] = [season(1)] * len(flights)\nfinal_answer('done')")
    ask = "Add a `season` column with season."
    events, model, _ = await run_turn(runtime, [code], ask, policies="guided,given_tools")
    assert tools_tip(["season"]) in model.requests[0][-1]["content"]
    assert ("given_tools", InterventionKind.TIP) in interventions(events)
    assert len(model.requests) == 1


async def test_no_tip_when_the_request_names_no_given_tool(runtime):
    runtime.inject(Variable("limit", 5, "A limit"))
    events, _, _ = await run_turn(
        runtime, [fenced("final_answer(limit)")], "Use limit.", policies="strict"
    )
    assert not [p for p, _ in interventions(events) if p == "given_tools"]
