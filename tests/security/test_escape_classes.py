"""Issue 19's escape classes: strict refuses every closed one; the open ones stay open.

`pytest -s` prints how many each policy refuses per class (the figures in docs/security.md).
"""

from __future__ import annotations

from collections import Counter

import pytest

from cave_tui.security import SecurityChecker
from tests.security.escape_classes import CLOSED, OPEN, EscapeClass


@pytest.fixture(scope="module")
def checkers() -> dict[str, SecurityChecker]:
    return {p: SecurityChecker.for_policy(p) for p in ("standard", "strict")}


def test_the_corpus_is_large_and_covers_every_closed_class():
    assert len(CLOSED) >= 40
    assert len({e.code for e in CLOSED + OPEN}) == len(CLOSED) + len(OPEN)
    counts = Counter(e.kind for e in CLOSED)
    for kind in EscapeClass:
        if "(open)" not in kind.value:
            assert counts[kind] >= 4, kind
    assert {e.kind for e in OPEN} == {k for k in EscapeClass if "(open)" in k.value}


@pytest.mark.parametrize("escape", CLOSED, ids=lambda e: e.code[:40])
def test_strict_refuses_every_closed_escape(checkers, escape):
    violations = checkers["strict"].check(escape.code)
    assert violations, f"strict let through: {escape.code!r} ({escape.achieves})"
    assert all(v.rule != "SyntaxRule" for v in violations), [str(v) for v in violations]


@pytest.mark.parametrize("escape", OPEN, ids=lambda e: e.code[:40])
def test_open_classes_are_not_pretended_closed(checkers, escape):
    assert checkers["strict"].check(escape.code) == []


def test_counts_per_class(checkers, capsys):
    total: Counter[EscapeClass] = Counter(e.kind for e in CLOSED)
    blocked = {p: Counter[EscapeClass]() for p in checkers}
    for escape in CLOSED:
        for policy, checker in checkers.items():
            if checker.check(escape.code):
                blocked[policy][escape.kind] += 1
    lines = [f"\nIssue 19 escape classes: {len(CLOSED)} escapes refused per policy"]
    for kind in total:
        lines.append(
            f"{kind.value:<45} {total[kind]:>3}  standard {blocked['standard'][kind]:>3}"
            f"  strict {blocked['strict'][kind]:>3}"
        )
    with capsys.disabled():
        print("\n".join(lines))
    assert sum(blocked["strict"].values()) == len(CLOSED)
    # standard allows files and pickles of your own data (issue 30), but never IPython's
    # shell or literal bombs.
    assert blocked["standard"][EscapeClass.EXHAUSTION] == total[EscapeClass.EXHAUSTION]
    shell = [
        e
        for e in CLOSED
        if e.kind is EscapeClass.IPYTHON
        and "history" not in e.achieves
        and "open()" not in e.achieves
    ]
    assert shell and all(checkers["standard"].check(e.code) for e in shell)
