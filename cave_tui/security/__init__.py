"""Static checks on model-written code before it runs (a guard rail, not a sandbox).

    from cave_tui.security import SecurityChecker
    checker = SecurityChecker.for_policy("strict")
    checker.check("import os")  # -> [SecurityViolation(...)]

See docs/security.md for what each policy stops and what no static check can stop.
"""

from cave_tui.security.checker import SecurityChecker
from cave_tui.security.rules import (
    AttributeRule,
    FunctionRule,
    ImportRule,
    RegexRule,
    SecurityRule,
)
from cave_tui.security.violations import SecurityError, SecurityViolation

__all__ = [
    "AttributeRule",
    "FunctionRule",
    "ImportRule",
    "RegexRule",
    "SecurityChecker",
    "SecurityError",
    "SecurityRule",
    "SecurityViolation",
]
