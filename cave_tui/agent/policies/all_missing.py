"""AllMissing: a result whose every value is missing (NaN): the labels used to build it
matched nothing, as `s.reindex(names)` does when `names` are not in `s`'s index."""

from __future__ import annotations

import re

from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.policies.request import wanted
from cave_tui.agent.turn import Answer, Turn

# What each call does with labels it does not hold, and the call that was meant.
_CAUSES = (
    (
        re.compile(r"\.map\("),
        "`.map(mapping)` gives NaN for every value the mapping has no key for: map by the "
        "column that holds the mapping's keys.",
    ),
    (
        re.compile(r"\.loc\[|\.get\("),
        "A lookup by labels the index does not hold gives NaN: look up by the key column.",
    ),
)
_REINDEX = re.compile(r"(?P<obj>[\w.\[\]'\"]+)\.reindex\((?P<labels>.+)\)\s*$")


def _reindex_fix(name: str, code: str) -> str:
    """The rename a `name = s.reindex(labels)` line meant, written out."""
    for line in code.splitlines():
        target, _, value = line.partition("=")
        found = _REINDEX.match(value.strip()) if target.strip() == name else None
        if found:
            return (
                "`.reindex(labels)` keeps only labels the index already has (NaN for the "
                f"others); to put new labels on the same values, rename the index: {name} = "
                f"{found['obj']}.rename(index={found['labels']})."
            )
    return ""


def missing_note(name: str, length: int | None, code: str) -> str:
    count = f"all {length:,} of its values are NaN" if length else "every value is NaN"
    cause = _reindex_fix(name, code) or next(
        (why for pattern, why in _CAUSES if pattern.search(code)), ""
    )
    return (
        f"`{name}` holds only missing values ({count}): the labels or keys used to build it "
        f"matched nothing. {cause}{' ' if cause else ''}Store the fixed result in `{name}`, "
        "then call final_answer."
    )


class AllMissing(BasePolicy):
    """A result of this turn whose every value is NaN is questioned once."""

    name = "all_missing"

    async def before_answer(self, turn: Turn, answer: Answer) -> Intervention | None:
        names = set(wanted(turn)) & turn.stored
        if not names:
            return None
        notes = []
        for row in await turn.rows():
            if row.name in names and row.all_missing:
                stored_by = [c.code for c in turn.cells if c.ok and row.name in c.result.changed]
                notes.append(missing_note(row.name, (row.shape or (None,))[0], stored_by[-1]))
        return self.joined(InterventionKind.DOUBT, notes)
