"""`SecurityChecker` and its four rules as upstream constructs and calls them."""

from __future__ import annotations

import ast

import pytest

from cave_tui.security import (
    AttributeRule,
    FunctionRule,
    ImportRule,
    RegexRule,
    SecurityChecker,
    SecurityError,
    SecurityRule,
    SecurityViolation,
)


def upstream_checker() -> SecurityChecker:
    """The checker of upstream's README."""
    return SecurityChecker(
        [
            ImportRule({"os", "subprocess", "sys"}),
            FunctionRule({"eval", "exec", "open"}),
            AttributeRule({"__globals__", "__builtins__"}),
            RegexRule([r"rm\s+-rf", r"sudo\s+"]),
        ]
    )


@pytest.mark.parametrize(
    ("code", "rule"),
    [
        ("import os", "ImportRule"),
        ("from subprocess import run", "ImportRule"),
        ("eval('1+1')", "FunctionRule"),
        ("open('x')", "FunctionRule"),
        ("f = lambda: 0\nf.__globals__", "AttributeRule"),
        ("cmd = 'rm -rf /'", "RegexRule"),
        ("x = 'sudo reboot'", "RegexRule"),
    ],
)
def test_each_upstream_rule_blocks_its_code(code, rule):
    violations = upstream_checker().check_code(code)
    assert violations and all(isinstance(v, SecurityViolation) for v in violations)
    assert rule in {v.rule for v in violations}
    assert all(v.message for v in violations)


def test_clean_code_passes():
    assert upstream_checker().check_code("import math\nprint(math.sqrt(4))") == []


def test_check_code_refuses_empty_code_as_upstream_does():
    for code in ("", "   \n"):
        violations = upstream_checker().check_code(code)
        assert [v.message for v in violations] == ["Parse error: Code cannot be empty"]
    assert SecurityChecker([]).check_code("")  # with no rules at all, too


def test_cave_check_still_lets_an_empty_cell_through():
    assert upstream_checker().check("") == []
    assert SecurityChecker.for_policy("standard").check("") == []


def test_check_code_reports_syntax_errors():
    violations = upstream_checker().check_code("def (:")
    assert len(violations) == 1 and "parse" in violations[0].message


def test_rules_take_upstream_positional_arguments():
    described = FunctionRule({"exec"}, "no dynamic code")
    assert described.description == "no dynamic code"
    assert "no dynamic code" in SecurityChecker([described]).check_code("exec('1')")[0].message
    single = RegexRule(r"delete", "Detects forbidden statements")
    assert single.description == "Detects forbidden statements"
    assert SecurityChecker([single]).check_code("db.delete()")
    with pytest.raises(ValueError):
        RegexRule("(unclosed")


def test_add_rule_and_rules_list():
    checker = SecurityChecker([ImportRule({"os"})])
    checker.add_rule(FunctionRule({"eval"}))
    assert [type(r).__name__ for r in checker.rules] == ["ImportRule", "FunctionRule"]
    assert checker.check_code("eval('1')")


def test_a_custom_rule_written_against_upstream_works():
    class NoGlobalRule(SecurityRule):
        def check(self, node: ast.AST) -> list[SecurityViolation]:
            if isinstance(node, ast.Global):
                return [SecurityViolation(message=f"global at line {node.lineno}")]
            return []

    checker = SecurityChecker([NoGlobalRule()])
    violations = checker.check_code("def f():\n    global x\n    x = 1")
    assert [v.message for v in violations] == ["global at line 2"]
    assert checker.check_code("x = 1") == []


def test_security_error_carries_its_message():
    error = SecurityError("blocked")
    assert error.message == "blocked" and str(error) == "blocked"


def test_the_named_policies_keep_working():
    strict = SecurityChecker.for_policy("strict")
    assert strict.check("import os")
    assert strict.check_code("import os")
    assert SecurityChecker.for_policy("trusted").check("import os") == []
