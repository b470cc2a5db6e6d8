"""What the prompt tuning of issue 8 added: each piece must work, and be switchable off.

final_answer() ends a turn from the cell that finishes it; generation stops where the
first code block closes; tracebacks keep the model's own lines; hints name the cause of
common mistakes; the namespace shows an object's methods under its own name.
"""

from __future__ import annotations

import pandas as pd
import pytest

from cave_tui import CaveAgent
from cave_tui.agent.core import CODE_END_STOP
from cave_tui.agent.messages import close_open_fence
from cave_tui.agent.observation import (
    FILE_HINT,
    PRECEDENCE_HINT,
    compact_traceback,
    error_hints,
    frame_columns,
    shape_result,
)
from cave_tui.agent.prompt import describe_namespace
from cave_tui.models import ScriptedModel
from cave_tui.runtime import Function, IPythonRuntime, Type, Variable
from cave_tui.runtime.base import ExecutionResult
from cave_tui.runtime.shipped.summary import summarize_namespace

# -- final_answer ----------------------------------------------------------------------------


async def test_final_answer_ends_the_turn_without_another_model_call(runtime):
    model = ScriptedModel(
        [
            "```python\nmean = flights['dep_delay'].mean()\n"
            "final_answer(f'The mean delay is {mean:.1f} min')\n```",
        ]
    )
    agent = CaveAgent(model, runtime)
    response = await agent.run("Mean delay into `mean`")
    assert response.completed and response.steps == 1 and response.usage.model_calls == 1
    assert response.content == "The mean delay is 7.3 min"  # built from the runtime's value
    assert await runtime.retrieve("mean") == pytest.approx(22 / 3)
    # History alternates and the answer is the last message; the marker never reaches it.
    assert [m["role"] for m in agent.history] == ["user", "assistant", "user", "assistant"]
    assert agent.history[-1]["content"] == response.content
    assert "cave-final" not in agent.history[2]["content"]
    assert agent.history[2]["content"].startswith("Ran OK")


async def test_final_answer_in_a_failing_cell_does_not_end_the_turn(runtime):
    model = ScriptedModel(["```python\nfinal_answer('done')\n1/0\n```", "It failed."])
    response = await CaveAgent(model, runtime).run("go")
    assert response.content == "It failed." and response.steps == 2
    assert "ZeroDivisionError" in model.requests[1][-1]["content"]


async def test_final_answer_is_hidden_and_survives_a_rebinding(runtime):
    model = ScriptedModel(
        ["```python\nfinal_answer = 3\n```", "Shadowed.", "```python\nfinal_answer('ok')\n```"]
    )
    agent = CaveAgent(model, runtime)
    assert "final_answer" not in await agent.namespace_text()
    assert "final_answer" not in runtime.injected
    await agent.run("one")  # the model shadows the name: the next call defines it again
    response = await agent.run("two")
    assert response.content == "ok"


async def test_final_answer_can_be_switched_off(runtime):
    model = ScriptedModel(["```python\nfinal_answer('x')\n```", "Done."])
    agent = CaveAgent(model, runtime, final_answer=False)
    assert "final_answer" not in agent.system_prompt()
    response = await agent.run("go")
    assert response.content == "Done." and response.steps == 2
    assert "final_answer" in CaveAgent(ScriptedModel([]), runtime).system_prompt()


# -- stop after the code block ---------------------------------------------------------------


async def test_generation_stops_after_the_first_block_and_the_fence_is_closed(runtime):
    # A server stops at the sequence; a model that goes on is cut where the parser closes
    # the first block.
    model = ScriptedModel(["```python\nx = 1\n```\nThis sets x.", "Done."])
    agent = CaveAgent(model, runtime)
    await agent.run("set x")
    assert model.options[0] == {"stop": [CODE_END_STOP]}
    assert agent.history[1]["content"] == "```python\nx = 1\n```"
    assert await runtime.retrieve("x") == 1
    unclosed = ScriptedModel(["```python\ny = 2", "Done."])  # a model that ended in the block
    agent = CaveAgent(unclosed, runtime)
    await agent.run("set y")
    assert agent.history[1]["content"] == "```python\ny = 2\n```"
    assert await runtime.retrieve("y") == 2
    off = ScriptedModel(["```python\nz = 3\n```\nmore", "Done."])
    agent = CaveAgent(off, runtime, stop_after_code=False)
    await agent.run("hi")
    assert off.options[0] == {}
    assert agent.history[1]["content"].endswith("more")


def test_close_open_fence_only_when_open():
    assert close_open_fence("```python\nx = 1\n") == "```python\nx = 1\n```"
    closed = "```python\nx = 1\n```\nmore"
    assert close_open_fence(closed) == closed
    assert close_open_fence("no code") == "no code"


# -- tracebacks and hints --------------------------------------------------------------------

LIBRARY_TRACEBACK = """\
Traceback (most recent call last):
  File <cell>, line 2, in <module>
    top = flights[flights['origin'] == 'EWR' | flights['origin'] == 'JFK']
  [… 6 frames omitted …]
  File /v/lib/python3.11/site-packages/pandas/core/ops/common.py, line 76, in new_method
    return method(self, other)
  File /v/lib/python3.11/site-packages/pandas/core/arraylike.py, line 99, in __ror__
    return self._logical_method(other, roperator.ror_)
  File /work/tasks.py, line 88, in by_maker
    return self._planes[mask]
  File /usr/lib/python3.11/functools.py, line 10, in wrapper
    return f()
TypeError: operation 'ror_' not supported for dtype 'str'"""


def test_compact_traceback_keeps_own_lines_and_names_the_library():
    text = compact_traceback(LIBRARY_TRACEBACK)
    assert text.splitlines() == [
        "Traceback:",
        "  cell line 2: top = flights[flights['origin'] == 'EWR' | flights['origin'] == 'JFK']",
        "  … inside pandas",
        "  tasks.py line 88 in by_maker: return self._planes[mask]",
        "  … inside the standard library",
        "TypeError: operation 'ror_' not supported for dtype 'str'",
    ]
    assert compact_traceback("NameError: name 'x' is not defined") == (
        "NameError: name 'x' is not defined"
    )


async def test_observation_hints_for_common_mistakes(runtime):
    agent = CaveAgent(ScriptedModel([]), runtime)
    cases = {
        "flights[flights['carrier'] == 'AA' | flights['carrier'] == 'UA']": PRECEDENCE_HINT,
        "flights.groupby('Carier').size()": "no column 'Carier' in flights; its columns: carrier,",
        "flights[['carrier', 'delay']]": "no column 'delay' in flights; its columns: dep_delay,",
        "import pandas as pd\npd.read_csv('flights.csv')": "`flights` is already defined",
        "import pandas as pd\npd.read_csv('data/other.csv')": FILE_HINT,
        "flights[flights.carrier == 'AA' and flights.dep_delay > 1]": "not and/or/not",
        "flights.dep_delays": "no column 'dep_delays' in flights; its columns: dep_delay,",
    }
    for code, expected in cases.items():
        result = await runtime.execute(code)
        hints = error_hints(code, result, frame_columns(await agent.runtime.namespace_summary()))
        assert any(expected in h for h in hints), (code, hints)
        assert "Hint: " + hints[0] in shape_result(result, 2000, hints)
    ok = await runtime.execute("flights['carrier'].nunique()")
    assert error_hints("flights['carrier'].nunique()", ok, {"flights": {"carrier": "str"}}) == []
    unrelated = ExecutionResult(success=False, error="KeyError: 'zzz'", error_type="KeyError")
    assert error_hints("d['zzz']", unrelated, {"flights": {"carrier": "str"}}) == [
        "'zzz' is not a column or an index label here. To pick rows by a value in a column: "
        "df[df['column'] == 'zzz']."
    ]
    lookup = ExecutionResult(success=False, error="KeyError: 'HNL'", error_type="KeyError")
    frames = {"airports": {"faa": "str", "lat": "float"}, "flights": {"dest": "str"}}
    assert error_hints("airports.loc['HNL', 'name']", lookup, frames) == [
        "'HNL' is not a column or an index label of airports. To pick its rows by a value: "
        "airports[airports['faa'] == 'HNL'] (text columns of airports: faa)."
    ]
    pandas3 = ExecutionResult(
        success=False,
        error="KeyError: \"None of ['carrer'] are in the columns\"",
        error_type="KeyError",
    )
    assert error_hints("", pandas3, frames) == [  # no close name: a column error all the same
        "There is no column 'carrer': the Namespace lists each frame's columns."
    ]
    assert error_hints("", pandas3, {"f": {"carrier": "str"}}) == [
        "There is no column 'carrer'; close names: carrier."
    ]
    elsewhere = ExecutionResult(
        success=False, error="KeyError: 'Column not found: name'", error_type="KeyError"
    )
    assert error_hints(
        "",
        elsewhere,
        {"flights": {"carrier": "str"}, "airlines": {"carrier": "str", "name": "str"}},
    ) == [
        "'name' is a column of airlines, not of the frame used here: use airlines, or merge it "
        "into a new frame first (a given frame keeps its name and columns)."
    ]


# -- namespace description -------------------------------------------------------------------


class Registry:
    """Planes by tail number."""

    def __init__(self, planes: pd.DataFrame) -> None:
        self._planes = planes

    def by_maker(self, name: str) -> pd.DataFrame:
        """All planes made by *name*."""
        return self._planes

    def count(self) -> int:
        """How many planes."""
        return len(self._planes)


async def test_namespace_lists_methods_under_instances_and_dedups_columns():
    frame = pd.DataFrame({c: [1.0, 2.0] for c in ("a", "b", "c", "d")})
    rt = IPythonRuntime(
        variables=[
            Variable("frame", frame, "Four columns"),
            Variable("reg", Registry(frame), "The registry"),
        ],
        types=[Type(Registry)],
        functions=[Function(len)],
    )
    try:
        await rt.execute("sub = frame[frame['a'] > 1].assign(e=1)")
        text = describe_namespace(await rt.namespace_summary())
    finally:
        await rt.stop()
    lines = text.splitlines()
    assert "- Registry(planes: DataFrame)" in lines  # the class: one line, no methods
    assert "  reg.by_maker(name: str) -> DataFrame # All planes made by *name*." in lines
    assert "  reg.count() -> int # How many planes." in lines
    assert "- frame: DataFrame 2x4 # Four columns" in lines
    assert "  columns: a:float, b:float, c:float, d:float" in lines
    assert "  columns: as frame, plus e:int" in lines
    assert "pandas." not in text and "-> None" not in text


def test_namespace_keeps_other_class_kinds_whole():
    from dataclasses import dataclass

    @dataclass
    class Point:
        x: float

    text = describe_namespace(summarize_namespace({"Point": Point, "p": Point(1.0)}))
    assert "- Point: dataclass fields: x: float" in text
    assert "- p: Point = " in text and "Point(x=1.0)" in text


# -- unfenced code, namespace placement ------------------------------------------------------


def test_unfenced_python_that_acts_is_code_and_prose_is_not():
    from cave_tui.agent.extraction import extract_code

    assert extract_code("adelie = penguins[penguins['species'] == 'Adelie']") == (
        "adelie = penguins[penguins['species'] == 'Adelie']"
    )
    assert extract_code("final_answer(f'{len(fp)} rows')") == "final_answer(f'{len(fp)} rows')"
    assert extract_code("import math\nx = math.pi") == "import math\nx = math.pi"
    assert extract_code("total: float = 1.5") == "total: float = 1.5"
    prose = ("Yes", "42", "df.shape", "The answer is 42.", "HNL", "Done: `x` holds it.", "")
    for answer in (*prose, "Done: 12.", "Answer: 42", "Result: done"):
        assert extract_code(answer) is None, answer


async def test_namespace_comes_first_in_the_latest_message_and_never_in_history(runtime):
    model = ScriptedModel(["```python\nx = 1\n```", "Done."])
    agent = CaveAgent(model, runtime, final_answer=False)
    await agent.run("Set x")
    first, second = (request[-1]["content"] for request in model.requests)
    assert first.startswith("Namespace (live):") and first.endswith("\n\nSet x")
    assert second.startswith("Namespace (live):") and "- x: int = 1" in second
    assert second.endswith("Ran OK, no output.\n[changed: x]")
    assert all("Namespace (live)" not in m["content"] for m in agent.history)


async def test_a_failed_cell_reports_only_changes_made_before_the_failing_line(runtime):
    failed = await runtime.execute(
        "import pandas as pd\nflights = pd.read_csv('nope.csv')\nflights['b'] = 1"
    )
    assert failed.changed == ["pd"]  # `flights` was never touched: the model must not think so
    partly = await runtime.execute("flights['c'] = 2\n1/0\nflights['d'] = 1")
    assert partly.changed == ["flights"]
    assert list((await runtime.retrieve("flights")).columns) == ["carrier", "dep_delay", "c"]
