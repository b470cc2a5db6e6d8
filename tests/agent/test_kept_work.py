"""A turn that ends short of its result says what it computed and under which names."""

from cave_tui.agent import events as ev
from tests.agent.policies.helpers import fenced, run_turn


def _kept(events) -> list[str]:
    return [
        e.content
        for e in events
        if isinstance(e, ev.NoticeEvent) and e.kind is ev.NoticeKind.KEPT_WORK
    ]


async def test_the_step_limit_lists_what_was_computed_and_offers_the_result_by_name(runtime):
    steps = [
        fenced("by_carrier = flights.groupby('carrier')['dep_delay'].mean()"),
        fenced("top_carrier = by_carrier.idxmax()"),
        fenced("print(top_carrier)"),
    ]
    events, _, _ = await run_turn(
        runtime,
        steps,
        "Find the carrier with the largest mean delay; store it in `top`.",
        max_steps=3,
    )
    limit = [i for i, e in enumerate(events) if isinstance(e, ev.MaxStepsReachedEvent)]
    notice = [i for i, e in enumerate(events) if e.content in _kept(events)]
    assert len(limit) == 1 and notice and notice[0] > limit[0]  # said once the limit is hit
    [kept] = _kept(events)
    assert "`by_carrier` (Series len 2)" in kept and "`top_carrier` (str" in kept
    assert "`top = top_carrier` keeps it under the asked name" in kept


async def test_an_answer_without_the_asked_result_is_followed_by_what_was_computed(runtime):
    steps = [
        fenced("worst = flights.groupby('carrier')['dep_delay'].mean().idxmax()"),
        "I could not finish.",
        "I could not finish.",
    ]
    events, _, _ = await run_turn(
        runtime, steps, "Store the carrier with the largest mean delay in `top`."
    )
    [kept] = _kept(events)
    assert "This turn computed `worst` (str" in kept and "`top` was asked for" in kept


async def test_a_turn_that_stored_what_it_was_asked_for_says_nothing_more(runtime):
    events, _, _ = await run_turn(
        runtime,
        [fenced("top = flights.groupby('carrier')['dep_delay'].mean().idxmax()"), "UA."],
        "Store the carrier with the largest mean delay in `top`.",
    )
    assert _kept(events) == []
