"""The checker wired into a real IPythonRuntime and a real CaveAgent loop."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from cave_tui import CaveAgent
from cave_tui.agent import AgentStatus, EventType
from cave_tui.models import ScriptedModel
from cave_tui.runtime import IPythonRuntime
from cave_tui.security import FunctionRule, SecurityChecker

MAGIC_CELLS = [
    "ls",
    "cat /etc/passwd",
    "!id",
    "%ls",
    "files = !ls",
    "%%bash\nid\n",
    "ls?",
    "%env",
]


@pytest.mark.parametrize("policy", ["standard", "strict"])
async def test_runtime_refuses_magics_and_shell_escapes(policy, tmp_path):
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy(policy))
    try:
        for cell in MAGIC_CELLS:
            result = await runtime.execute(cell, timeout=10)
            assert result.blocked, cell
            assert not result.success and result.error_type == "SecurityError"
            assert result.security_violations[0].rule == "MagicRule"
            assert "[MagicRule]" in (result.error_text or "")
        # Nothing ran: a shell escape that would create a file did not.
        target = tmp_path / "made-by-shell"
        result = await runtime.execute(f"!touch {target}", timeout=10)
        assert result.blocked and not target.exists()
        # The runtime still works for ordinary code afterwards.
        ok = await runtime.execute("x = 6 * 7\nprint(x)", timeout=10)
        assert ok.success and ok.output.strip() == "42"
    finally:
        await runtime.stop()


def _mkdir_cell(path: Path) -> str:
    cell = f"mkdir {path}"
    ast.parse(cell)  # valid Python too (a chain of divisions): only automagic makes it a command
    return cell


async def test_without_a_checker_ipython_runs_automagic_aliases(tmp_path):
    """The threat is real: a one-line `mkdir PATH` runs as a shell alias by default."""
    target = tmp_path / "made_by_alias"
    runtime = IPythonRuntime()
    try:
        result = await runtime.execute(_mkdir_cell(target), timeout=10)
    finally:
        await runtime.stop()
    assert result.success and target.is_dir()


async def test_with_any_checker_automagic_and_autocall_are_off(tmp_path):
    """Even a checker that lets magics through gets Python semantics, not aliases."""
    target = tmp_path / "made_by_alias"
    checker = SecurityChecker([FunctionRule({"eval"})], magics=True)
    runtime = IPythonRuntime(security_checker=checker)
    try:
        result = await runtime.execute(_mkdir_cell(target), timeout=10)
        assert runtime.shell.automagic is False and runtime.shell.autocall == 0
    finally:
        await runtime.stop()
    assert not result.success and result.error_type == "NameError"
    assert not target.exists()


@pytest.mark.parametrize("policy", ["standard", "strict"])
async def test_runtime_reports_violations_with_rule_and_position(policy):
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy(policy))
    try:
        code = "x = 1\nimport subprocess\nsubprocess.run(['id'])"
        result = await runtime.execute(code, timeout=10)
    finally:
        await runtime.stop()
    assert result.blocked
    first = result.security_violations[0]
    assert first.rule == "ImportRule" and first.lineno == 2
    assert str(first).startswith("line 2, col 1: import of 'subprocess' is not allowed")


async def test_agent_turns_a_blocked_cell_into_a_security_error_and_continues():
    checker = SecurityChecker.for_policy("strict")
    runtime = IPythonRuntime(security_checker=checker)
    model = ScriptedModel(
        [
            "Let me look.\n```python\nimport os\nprint(os.listdir('.'))\n```",
            "```python\ntotal = sum(range(5))\nprint(total)\n```",
            "The total is 10.",
        ]
    )
    agent = CaveAgent(model, runtime=runtime)
    try:
        events = [e async for e in agent.stream_events("add up 0..4")]
        total = await runtime.retrieve("total")
    finally:
        await runtime.stop()
    security = [e for e in events if e.type == EventType.SECURITY_ERROR]
    assert len(security) == 1
    violation = security[0].violations[0]
    assert violation["rule"] == "ImportRule"
    assert (violation["lineno"], violation["col"]) == (1, 1)
    assert "Blocked by the security policy" in security[0].content
    assert "[ImportRule]" in security[0].content
    # The run went on: the model saw the refusal, rewrote, and finished.
    assert "[ImportRule]" in model.requests[1][-1]["content"]
    assert any(e.type == EventType.EXECUTION_OUTPUT and "10" in e.content for e in events)
    final = [e for e in events if e.type == EventType.FINAL_RESPONSE]
    assert final and final[-1].content == "The total is 10."
    assert total == 10
    # The policy is one line of the system prompt.
    system = model.requests[0][0]["content"]
    assert system.rstrip().endswith(checker.prompt_line())
    assert system.count("Security policy:") == 1


async def test_agent_run_completes_after_a_blocked_magic():
    runtime = IPythonRuntime(security_checker=SecurityChecker.for_policy("standard"))
    model = ScriptedModel(["```python\n!cat /etc/passwd\n```", "```python\nprint(1 + 1)\n```", "2"])
    try:
        response = await CaveAgent(model, runtime=runtime).run("go")
    finally:
        await runtime.stop()
    assert response.status is AgentStatus.COMPLETED and response.content == "2"
    assert "shell escape" in model.requests[1][-1]["content"]
