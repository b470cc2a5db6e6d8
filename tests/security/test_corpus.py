"""The escape corpus and the benign cells, against every policy.

`test_counts_per_policy` prints how many escapes each policy blocks, per category; strict
must block all of them. The benign cells must pass strict (and standard) untouched.
"""

from __future__ import annotations

from collections import Counter

import pytest

from cave_tui.runtime import Function, IPythonRuntime
from cave_tui.security import SecurityChecker
from tests.security.benign_everyday import ALL_BENIGN
from tests.security.corpus import CATEGORIES, CORPUS, SETUP

POLICIES = ("trusted", "standard", "strict")

# The categories issue 3 names; every one must be represented by several attempts.
ISSUE_CATEGORIES = {
    "import aliases and dotted imports",
    "import primitives",
    "function aliases",
    "builtins access",
    "dunder chains",
    "string attribute access",
    "frame introspection",
    "IPython magics and get_ipython",
    "modules re-exported by allowed modules",
    "data-library I/O",
    "deserialization",
    "unicode identifier normalisation",
    "interactive debuggers",
    "native code",
    "setattr tricks",
    "objects injected by the host",
}


def helper(x: int) -> int:
    """A host function injected into the runtime (its globals are this test module's)."""
    return x + 1


@pytest.fixture(scope="module")
def checkers() -> dict[str, SecurityChecker]:
    return {p: SecurityChecker.for_policy(p) for p in POLICIES}


def test_corpus_covers_every_category_with_real_entries():
    assert len(CORPUS) >= 100
    counts = Counter(e.category for e in CORPUS)
    assert set(counts) <= set(CATEGORIES)
    for category in ISSUE_CATEGORIES:
        assert counts[category] >= 5, f"only {counts[category]} attempts for {category!r}"
    assert len({e.code for e in CORPUS}) == len(CORPUS), "duplicate attempts"
    assert all(len(e.achieves.split()) >= 2 for e in CORPUS), "each entry says what it achieves"


def test_counts_per_policy(checkers, capsys):
    blocked: dict[str, Counter[str]] = {p: Counter() for p in POLICIES}
    total: Counter[str] = Counter()
    missed = []
    for escape in CORPUS:
        total[escape.category] += 1
        for policy, checker in checkers.items():
            if checker.check(escape.code):
                blocked[policy][escape.category] += 1
            elif policy == "strict":
                missed.append(escape)
    width = max(len(c) for c in total)
    lines = [f"\nEscape corpus: {len(CORPUS)} attempts blocked per policy"]
    lines.append(
        f"{'category'.ljust(width)}  {'total':>5}  " + "  ".join(f"{p:>8}" for p in POLICIES)
    )
    for category in CATEGORIES:
        row = [f"{blocked[p][category]:>8}" for p in POLICIES]
        lines.append(f"{category.ljust(width)}  {total[category]:>5}  " + "  ".join(row))
    sums = [f"{sum(blocked[p].values()):>8}" for p in POLICIES]
    lines.append(f"{'all'.ljust(width)}  {len(CORPUS):>5}  " + "  ".join(sums))
    with capsys.disabled():
        print("\n".join(lines))
    assert not missed, "strict let these through:\n" + "\n".join(
        f"[{e.category}] {e.code!r}" for e in missed
    )
    assert sum(blocked["trusted"].values()) == 0
    # standard is a deny-list, not a sandbox; it must still stop these classes outright.
    for category in ("IPython magics and get_ipython", "dunder chains",
                     "interactive debuggers", "objects injected by the host"):  # fmt: skip
        assert blocked["standard"][category] == total[category], category
    # Pickles of your own data are everyday work (issue 30); a pickle written into the cell,
    # marshal, pickle hooks and copyreg still hide code from the check.
    hidden = [e for e in CORPUS if e.category == "deserialization" and any(
        word in e.code for word in ("loads(b", "marshal", "__reduce__", "copyreg"))]  # fmt: skip
    assert len(hidden) >= 4 and all(checkers["standard"].check(e.code) for e in hidden)


@pytest.mark.parametrize("escape", CORPUS, ids=lambda e: f"{e.category[:20]}:{e.code[:30]}")
def test_strict_blocks_and_names_a_rule(checkers, escape):
    violations = checkers["strict"].check(escape.code)
    assert violations, f"not blocked: {escape.code!r} ({escape.achieves})"
    for v in violations:
        assert v.rule and v.message
        assert str(v).endswith(f"[{v.rule}]")


@pytest.mark.parametrize("cell", ALL_BENIGN, ids=lambda b: b.name)
def test_benign_cells_pass_strict_and_standard(checkers, cell):
    policies = ("standard",) if cell.strict_reason else ("strict", "standard")
    for policy in policies:
        violations = checkers[policy].check(cell.code)
        assert violations == [], (
            f"{policy} blocked benign {cell.name}: {[str(v) for v in violations]}"
        )


def test_benign_corpus_size_and_exclusions(checkers):
    """At least 100 cells are checked under strict; every exclusion says why."""
    assert len({b.name for b in ALL_BENIGN}) == len(ALL_BENIGN)
    under_strict = [b for b in ALL_BENIGN if b.strict_reason is None]
    assert len(under_strict) >= 100
    for cell in ALL_BENIGN:
        if cell.strict_reason:  # the exclusion is real: strict does refuse the cell
            assert len(cell.strict_reason.split()) >= 5
            assert checkers["strict"].check(cell.code), cell.name
    assert checkers["strict"].check(SETUP) == []


PROVEN = [e for e in CORPUS if e.proof]


async def test_proofs_work_unchecked_and_strict_blocks_them(checkers):
    """Each technique is real: with no checker its harmless variant succeeds."""
    runtime = IPythonRuntime(functions=[Function(helper)])
    failures = []
    try:
        for escape in PROVEN:
            result = await runtime.execute(escape.proof, timeout=30)
            if not result.success:
                failures.append(f"{escape.proof!r} failed unchecked: {result.error_text}")
            if not checkers["strict"].check(escape.proof):
                failures.append(f"strict let the proof through: {escape.proof!r}")
    finally:
        await runtime.stop()
    assert not failures, "\n".join(failures)


def test_enough_proofs():
    assert len(PROVEN) >= 12
    assert len({e.category for e in PROVEN}) >= 10
