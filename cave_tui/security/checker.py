"""`SecurityChecker`: run the rules on what IPython will actually execute.

`check(code)` transforms the cell as IPython will (`source.prepare`), refuses IPython
rewrites (magics, shell escapes, one-line automagic) unless `magics=True` (the
`MagicRule`), refuses cells that do not parse (`SyntaxRule`),
then runs every rule over one shared index of the AST. A rule that crashes blocks the cell
(fail closed) with a message saying so. This is a guard rail for model-written code, not
an isolation boundary; see docs/security.md.
"""

from __future__ import annotations

import ast
import gc
from collections.abc import Iterable

from cave_tui.security.cell import Cell
from cave_tui.security.ipython_rules import MagicRule
from cave_tui.security.policies import POLICIES, policy_spec
from cave_tui.security.resolve import ModuleResolver
from cave_tui.security.rules import SecurityRule, build_name_problem
from cave_tui.security.source import PreparedCell, prepare
from cave_tui.security.violations import SecurityError, SecurityViolation

MAX_VIOLATIONS = 12  # more would flood the model's context; the first ones say enough
_FLAGS = ast.PyCF_ONLY_AST | ast.PyCF_ALLOW_TOP_LEVEL_AWAIT


def _parse(source: str) -> ast.AST:
    return compile(source, "<cell>", "exec", flags=_FLAGS, dont_inherit=True)


class SecurityChecker:
    """Checks cells against a list of rules; `for_policy(name)` builds the named policies."""

    POLICIES = POLICIES

    def __init__(
        self,
        rules: Iterable[SecurityRule] = (),
        *,
        magics: bool = False,
        policy: str = "custom",
        summary: str | None = None,
    ) -> None:
        self.rules: list[SecurityRule] = []
        self.magics = magics
        self.policy = policy
        self.summary = summary
        self.resolver: ModuleResolver | None = None  # the strict policy's module resolver
        self._magic_rule = MagicRule()
        self._name_problem = build_name_problem([])
        for rule in rules:
            self.add_rule(rule)

    # -- configuration -------------------------------------------------------------------
    def add_rule(self, rule: SecurityRule) -> None:
        if not isinstance(rule, SecurityRule):
            raise TypeError(f"expected a SecurityRule, got {type(rule).__name__}")
        self.rules.append(rule)
        self._name_problem = build_name_problem(self.rules)

    @classmethod
    def for_policy(
        cls, name: str, extra_imports: Iterable[str] = (), *, sandboxed: bool = False
    ) -> SecurityChecker:
        """The named policy: `trusted` (no checks), `standard` (deny-list), `strict`.

        *sandboxed*: the cells run in the sandboxed kernel; `standard` is lighter there.
        """
        spec = policy_spec(name, extra_imports, sandboxed=sandboxed)
        checker = cls(
            spec.rules, policy=spec.policy.value, magics=spec.magics, summary=spec.summary
        )
        checker.resolver = spec.resolver
        return checker

    def prompt_line(self) -> str:
        """One line for the system prompt describing the active policy ('' for none)."""
        return self.summary or ""

    def __repr__(self) -> str:
        return f"SecurityChecker(policy={self.policy!r}, rules={len(self.rules)})"

    # -- checking ------------------------------------------------------------------------
    def check(self, code: object) -> list[SecurityViolation]:
        """Violations that stop *code* (a str) from running; empty when it may run."""
        if self.policy == "trusted":
            return []
        if not isinstance(code, str):
            return [SecurityViolation("code must be a string", rule="SyntaxRule")]
        if not code.strip():
            return []
        # Parsing allocates thousands of AST nodes; pausing the cyclic GC meanwhile halves
        # the check time (nothing here creates cycles that need collecting mid-check).
        paused = gc.isenabled()
        if paused:
            gc.disable()
        try:
            return self._check(code)
        finally:
            if paused:
                gc.enable()

    def _check(self, code: str) -> list[SecurityViolation]:
        prepared = prepare(code)
        violations: list[SecurityViolation] = []
        if prepared.error:
            return [
                SecurityViolation(
                    f"IPython cannot transform this cell ({prepared.error})", rule="SyntaxRule"
                )
            ]
        tree = None
        try:
            tree = _parse(prepared.source)
        except SyntaxError as exc:
            if not self.magics and prepared.rewrites:
                pass  # the rewrite is the real story; reported below
            else:
                lineno = (exc.lineno or 1) + prepared.line_offset
                col = exc.offset + prepared.col_shift if exc.offset and exc.offset > 0 else None
                msg = exc.msg or "invalid syntax"
                violations.append(
                    SecurityViolation(
                        f"the code does not parse (syntax error): {msg}",
                        rule="SyntaxRule",
                        lineno=lineno,
                        col=col,
                    )
                )
        except (ValueError, RecursionError, MemoryError, OverflowError) as exc:
            violations.append(
                SecurityViolation(f"the code cannot be checked: {exc}", rule="SyntaxRule")
            )
        cell = None
        if tree is not None:
            cell = Cell(tree, prepared, self._subcheck, name_problem=self._name_problem)
        elif not (prepared.rewrites or prepared.automagic):
            return violations
        if not self.magics:
            if cell is None:
                cell = Cell(ast.Module(body=[], type_ignores=[]), prepared)
            violations.extend(self._magic_rule.check_cell(cell))
        if tree is not None and cell is not None:
            found = self._run_rules(cell)
            if not self.magics and prepared.rewrites:
                # `!ls` is reported as a shell escape, not as the get_ipython() it became.
                rewritten = {line for line, _what in prepared.rewrites}
                found = [v for v in found if v.lineno not in rewritten]
            violations.extend(found)
        return self._finish(violations)

    def check_code(self, code: object) -> list[SecurityViolation]:
        """Upstream's entry point: `check`, except that empty code is a violation.

        Cave's `check` lets an empty cell through (it runs and does nothing); upstream's
        `check_code` refuses it, and code written against upstream may rely on that.
        """
        if isinstance(code, str) and not code.strip():
            return [SecurityViolation("Parse error: Code cannot be empty", rule="SyntaxRule")]
        return self.check(code)

    def enforce(self, code: str) -> None:
        """Raise SecurityError when *code* may not run."""
        violations = self.check(code)
        if violations:
            raise self.error_for(violations)

    @staticmethod
    def error_for(violations: Iterable[SecurityViolation]) -> SecurityError:
        """The exception for a refused cell (a runtime's `ExecutionResult.error`, as upstream)."""
        return SecurityError(violations)

    def _run_rules(self, cell: Cell, skip_magic: bool = False) -> list[SecurityViolation]:
        found: list[SecurityViolation] = []
        for rule in self.rules:
            if skip_magic and isinstance(rule, MagicRule):
                continue
            try:
                found.extend(rule.check_cell(cell))
            except Exception as exc:  # fail closed: an unchecked cell does not run
                found.append(
                    SecurityViolation(
                        f"rule failed on this cell ({type(exc).__name__}: {exc}); "
                        "the cell was not run",
                        rule=rule.name,
                    )
                )
        return found

    def _subcheck(self, text: str, at: ast.AST) -> list[SecurityViolation]:
        """Check code found inside a string literal; report it at the literal's position."""
        try:
            tree = _parse(text)
        except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
            return [SecurityViolation(f"cannot parse string contents: {exc}", rule="SyntaxRule")]
        inner = Cell(
            tree,
            PreparedCell(raw=text, source=text),
            self._subcheck,
            depth=1,
            name_problem=self._name_problem,
        )
        return self._run_rules(inner, skip_magic=True)

    @staticmethod
    def _finish(violations: list[SecurityViolation]) -> list[SecurityViolation]:
        unique: dict[tuple[object, ...], SecurityViolation] = {}
        for v in violations:
            unique.setdefault((v.rule, v.lineno, v.col, v.message), v)
        ordered = sorted(
            unique.values(), key=lambda v: (v.lineno or 0, v.col or 0, v.rule, v.message)
        )
        if len(ordered) > MAX_VIOLATIONS:
            extra = len(ordered) - MAX_VIOLATIONS + 1
            ordered = ordered[: MAX_VIOLATIONS - 1]
            ordered.append(
                SecurityViolation(f"... and {extra} more violations", rule="SecurityChecker")
            )
        return ordered
