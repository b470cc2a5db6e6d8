"""Issue 31 (your own `!` cells): a user's cell that does not parse fails with Python's own
message and line ("'(' was never closed"), not IPython's "incomplete input"; the agent's cells
keep the checker's report. Real IPython shell, in process (the kernel: tests/frontends/cli)."""

from __future__ import annotations

import pytest

from cave_tui.runtime.ipython import IPythonRuntime
from cave_tui.security import SecurityChecker


@pytest.fixture
async def rt():
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy("standard"))
    yield runtime
    await runtime.stop()


@pytest.mark.parametrize(
    ("code", "error", "message", "line"),
    [
        ("print((1)", "SyntaxError", "'(' was never closed", "print((1)"),
        ("rows = [1, 2,\n", "SyntaxError", "'[' was never closed", "rows = [1, 2,"),
        ("n = 1\nif n:\n", "IndentationError", "expected an indented block after 'if'", "if n:"),
    ],
)
async def test_a_user_cell_that_does_not_parse_shows_pythons_message_and_line(
    rt, code, error, message, line
):
    result = await rt.execute(code, checked=False)  # the user's own cell: the guard skips it
    assert not result.success and result.error_type == error
    assert message in result.error_text, result.error_text
    assert line in result.error_text
    assert "incomplete input" not in result.error_text
    assert "security" not in result.error_text.lower()  # not the guard's refusal


async def test_the_agents_cell_that_does_not_parse_keeps_the_checkers_report(rt):
    result = await rt.execute("print((1)")  # checked: the model's code
    assert not result.success and result.error_type == "SyntaxError"
    assert "the code does not parse (syntax error): '(' was never closed" in result.error_text


async def test_a_cell_that_parses_still_runs_after_one_that_did_not(rt):
    await rt.execute("print((1)", checked=False)
    result = await rt.execute("x = (1 +\n 2)\nprint('x is', x)", checked=False)
    assert result.success and result.output == "x is 3\n"
