"""Rewind: failed exchanges leave the model's context; what ran without error stays."""

from cave_tui.agent import CaveAgent
from cave_tui.agent import events as ev
from cave_tui.agent.policies.rewind import (
    REWIND_FOOTER,
    REWIND_HEADER,
    failure_summary,
    rewound_request,
)
from cave_tui.models import ScriptedModel
from cave_tui.runtime.base import ExecutionResult


def _contents(messages):
    return [m["content"] for m in messages]


async def test_two_failures_in_a_row_rewind_the_turn_to_the_request_plus_their_errors(runtime):
    first = "```python\nx = flights.loc['AA', 'dep_delay']\n```"
    second = "```python\nx = flights.loc['AA']\n```"
    fixed = "```python\nx = flights.loc[flights['carrier'] == 'AA', 'dep_delay'].sum()\n```"
    model = ScriptedModel([first, second, fixed, "Done: 12."])
    agent = CaveAgent(model, runtime, final_answer=False)
    events = [e async for e in agent.stream_events("Sum AA's delays into `x`.")]
    assert await runtime.retrieve("x") == 12.0
    # The third call sees no failed code: only the request, then what the failures taught.
    third = model.requests[2]
    assert [m["role"] for m in third] == ["system", "user"]
    text = third[-1]["content"]
    assert text.index("Sum AA's delays") < text.index(REWIND_HEADER) < text.index(REWIND_FOOTER)
    assert "KeyError: 'AA'" in text and "Hint:" in text
    assert "```" not in text and "[changed" not in text
    # History keeps the rewound request and what followed it, and stays well-formed.
    assert [m["role"] for m in agent.history] == ["user", "assistant", "user", "assistant"]
    rewinds = [e for e in events if isinstance(e, ev.InterventionEvent)]
    assert [(e.policy, e.kind) for e in rewinds if e.kind == "rewind"] == [("rewind", "rewind")]
    assert "retries" in rewinds[-1].content
    # Every cell is still in the event stream: the rewind is the model's context only.
    assert len([e for e in events if isinstance(e, ev.CodeEvent)]) == 3


async def test_a_resent_failure_rewinds_and_samples(runtime):
    bad = "```python\nflights['nope']\n```"
    model = ScriptedModel([bad, bad, "```python\nok = 1\n```", "Done."])
    agent = CaveAgent(model, runtime, final_answer=False)
    assert (await agent.run("go")).content == "Done."
    assert await runtime.retrieve("ok") == 1
    assert "nope" not in _contents(model.requests[2])[-1].split(REWIND_HEADER)[0]
    assert [o.get("temperature") for o in model.options] == [None, None, 0.7, None]
    assert _contents(agent.history).count(bad) == 0


async def test_an_echoed_answer_after_a_failure_rewinds(runtime):
    model = ScriptedModel(
        [
            "```python\nflights['nope']\n```",
            "```python\nfinal_answer('No file is needed: use `flights`.')\n```",
            "```python\nn = len(flights)\nfinal_answer(f'{n} flights')\n```",
        ]
    )
    response = await CaveAgent(model, runtime).run("count")
    assert response.content == "3 flights"
    assert REWIND_HEADER in model.requests[2][-1]["content"]


async def test_rewinds_are_bounded_then_failures_stay_in_context(runtime):
    bad = [f"```python\nflights['nope{i}']\n```" for i in range(8)]
    model = ScriptedModel(bad)
    agent = CaveAgent(model, runtime, final_answer=False, max_steps=8)
    events = [e async for e in agent.stream_events("go")]
    rewinds = [e for e in events if isinstance(e, ev.InterventionEvent) and e.kind == "rewind"]
    assert len(rewinds) == 2  # MAX_REWINDS
    # After the last rewind the failures pile up in context again, as without rewinds.
    assert len(model.requests[-1]) > 3
    off = ScriptedModel([*bad[:3], "Gave up."])
    await CaveAgent(off, runtime, final_answer=False, rewind=False).run("go")
    assert all(REWIND_HEADER not in r[-1]["content"] for r in off.requests)


async def test_a_rewind_never_reaches_into_an_earlier_turn(runtime):
    model = ScriptedModel(
        [
            "```python\na = 1\n```",
            "a is 1.",
            "```python\nflights['x1']\n```",
            "```python\nflights['x2']\n```",
            "Cannot.",
        ]
    )
    agent = CaveAgent(model, runtime, final_answer=False)
    await agent.run("set a")
    await agent.run("use x")
    contents = _contents(agent.history)
    assert contents[:4] == ["set a", "```python\na = 1\n```", contents[2], "a is 1."]
    assert contents[4].startswith("use x\n\n" + REWIND_HEADER) and contents[5] == "Cannot."


def test_failure_summary_and_rewound_request():
    error = (
        "Traceback (most recent call last):\n"
        '  File "<cell>", line 2, in <module>\n'
        "    y = df.loc['HNL']\n"
        "KeyError: 'HNL'\n"
    )
    result = ExecutionResult(
        success=False, output="row\n" * 500, error=error, error_type="KeyError", changed=["y"]
    )
    summary = failure_summary(result, ["pick rows by value"])
    lines = summary.splitlines()
    assert lines[-2:] == ["KeyError: 'HNL'", "Hint: pick rows by value"]
    assert any("y = df.loc['HNL']" in line for line in lines)
    assert "row" not in lines and not any("changed" in line for line in lines)  # printed: gone
    long = ExecutionResult(success=False, error="ValueError: " + "x" * 5000)
    assert len(failure_summary(long)) < 1300  # 1,200 and the cut marker
    blocked = ExecutionResult(success=False, security_violations=["import os is not allowed"])
    assert failure_summary(blocked).splitlines() == [
        "Blocked by the security policy:",
        "- import os is not allowed",
    ]
    assert rewound_request("task", []) == "task"
    text = rewound_request("task", ["a", "b", "a", "c"])
    assert text == f"task\n\n{REWIND_HEADER}\nb\nc\n{REWIND_FOOTER}"  # distinct, latest two


async def test_a_rewind_keeps_the_cells_that_ran_and_names_what_they_stored(runtime):
    explore = "```python\ncarriers = sorted(flights['carrier'].unique())\nprint(carriers)\n```"
    bad = ["```python\nflights['nope1']\n```", "```python\nflights['nope2']\n```"]
    fixed = "```python\nn = len(carriers)\n```"
    model = ScriptedModel([explore, *bad, fixed, "Two carriers."])
    agent = CaveAgent(model, runtime, final_answer=False)
    assert (await agent.run("How many carriers? Store `n`.")).content == "Two carriers."
    fourth = _contents(model.requests[3])
    # The exploring exchange stays, with its output; the failed ones are gone.
    assert any("print(carriers)" in text for text in fourth)
    assert any("['AA', 'UA']" in text for text in fourth)
    assert not any("nope1" in text.split(REWIND_HEADER)[0] for text in fourth)
    assert "they stored `carriers`" in fourth[1]
    assert await runtime.retrieve("n") == 2
