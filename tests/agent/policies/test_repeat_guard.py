"""RepeatGuard: resent failing code is not run again, unless its error can pass."""

from cave_tui.agent import CaveAgent
from cave_tui.agent.events import EventType, InterventionKind
from cave_tui.agent.policies.resend import may_pass
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Function
from cave_tui.runtime.base import ExecutionResult
from tests.agent.policies.helpers import fenced, interventions, run_turn


async def test_repeated_failing_code_is_not_rerun():
    model = ScriptedModel(
        [
            "```python\ncounter = globals().get('counter', 0) + 1\nraise ValueError('bad')\n```",
            "```python\ncounter = globals().get('counter', 0) + 1\nraise ValueError('bad')\n```",
            "giving up",
        ]
    )
    agent = CaveAgent(model, policies="repeat_guard")  # with rewinds: test_rewind.py
    events = [e async for e in agent.stream_events("try")]
    assert await agent.runtime.retrieve("counter") == 1
    assert len([e for e in events if e.type is EventType.EXECUTION_ERROR]) == 1
    assert interventions(events) == [("repeat_guard", InterventionKind.REFUSE)]
    assert "not re-run" in model.requests[2][-1]["content"]


async def test_resent_failed_code_makes_the_next_call_sample(runtime):
    bad = "```python\nflights['nope']\n```"
    model = ScriptedModel([bad, bad, bad, "```python\nok = 1\n```", "Done."])
    agent = CaveAgent(model, runtime, final_answer=False, policies="repeat_guard")
    response = await agent.run("go")
    assert response.content == "Done."
    # The resent copies never reach the model again; the note rides on the failed observation.
    assert [m["content"] for m in agent.history].count(bad) == 1
    assert "not re-run" in model.requests[2][-1]["content"]
    temperatures = [o.get("temperature") for o in model.options]
    assert temperatures == [None, None, 0.7, 1.0, None]  # escalates, then back to the default
    off = ScriptedModel([bad, bad, "Gave up."])
    await CaveAgent(off, runtime, loop_temperature=None, policies="repeat_guard").run("go")
    assert all("temperature" not in o for o in off.options)


def test_errors_of_the_world_may_pass_and_errors_of_the_code_do_not():
    for kind in ("TimeoutError", "ConnectionResetError", "ReadTimeout", "OSError", "URLError"):
        assert may_pass(ExecutionResult(success=False, error="x", error_type=kind)), kind
    for kind in ("KeyError", "FileNotFoundError", "PermissionError", "ValueError"):
        assert not may_pass(ExecutionResult(success=False, error="x", error_type=kind)), kind
    assert may_pass(ExecutionResult(success=False, error="x", error_type="X", timed_out=True))


async def test_a_resend_after_a_passing_error_runs_again_and_costs_no_extra_call(runtime):
    calls = []

    def fetch_rate(currency: str) -> float:
        """Today's rate of *currency* (a service that times out once)."""
        calls.append(currency)
        if len(calls) == 1:
            raise TimeoutError("the rate service did not answer in time")
        return 1.1

    runtime.inject(Function(fetch_rate))
    cell = fenced("rate = fetch_rate('EUR')\nfinal_answer(f'{rate}')")
    for policies in ("guided", "strict", "minimal"):
        calls.clear()
        events, model, _ = await run_turn(runtime, [cell, cell], "EUR rate?", policies=policies)
        assert events[-1].content == "1.1" and len(model.requests) == 2, policies
        assert calls == ["EUR", "EUR"]
        assert not [k for _, k in interventions(events) if k in ("refuse", "rewind", "doubt")]


async def test_a_passing_error_that_fails_the_same_way_twice_is_then_stopped(runtime):
    runtime.inject(Function(_always_times_out))
    cell = fenced("_always_times_out()")
    events, _, _ = await run_turn(
        runtime, [cell] * 3 + ["It keeps timing out."], "go", policies="repeat_guard"
    )
    errors = [e for e in events if e.type is EventType.EXECUTION_ERROR]
    assert len(errors) == 2  # the first resend ran; the second was stopped
    assert events[-1].content == "It keeps timing out."


def _always_times_out() -> None:
    """A service that never answers."""
    raise TimeoutError("no answer")
