"""RequestTips: pandas idioms shown only to requests that need them.

A small model copies a pattern from its system prompt into tasks where it does not
belong: with "most frequent b per a" always in view, "count the flights by tzone"
became `groupby('tzone')['year'].agg(lambda s: s.value_counts().idxmax())`
(docs/prompt-tuning.md, change 27). Each tip here has a trigger on the user's request and
goes under the namespace, in the part of the request that changes anyway, so the
system prompt stays short and byte-identical for prompt caches.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from cave_tui.agent.observation import entity_stem
from cave_tui.agent.policies.base import BasePolicy, Intervention, InterventionKind
from cave_tui.agent.turn import Turn
from cave_tui.runtime.shipped.summary import VarInfo

MAX_TIPS = 2
TIPS_HEADER = "Tips for this request:"


@dataclass(frozen=True)
class Tip:
    name: str
    text: str
    needs: tuple[re.Pattern[str], ...]  # every pattern must match the request
    unless: re.Pattern[str] | None = None  # no tip when this matches


def _words(pattern: str) -> re.Pattern[str]:
    return re.compile(rf"\b(?:{pattern})\b", re.IGNORECASE)


_GROUPED = _words(r"each|per|every|by")

TIPS: tuple[Tip, ...] = (
    Tip(
        "pair",
        "Most frequent pair: df.groupby(['a', 'b']).size().idxmax() gives the (a, b) tuple.",
        (_words(r"pairs?|combinations?"), _words(r"most|busiest|common|frequent|popular")),
    ),
    Tip(
        "mode per group",
        "Most frequent b per a: df.groupby('a')['b'].agg(lambda s: s.value_counts().idxmax()).",
        (_words(r"most (?:frequent|common|popular)|mode|busiest"), _GROUPED),
        unless=_words(r"pairs?|combinations?"),
    ),
    Tip(
        "rate per group",
        "Share of each a's rows that meet a condition: (df['x'] > 15).groupby(df['a']).mean() "
        "* 100 (drop missing x first if asked).",
        (_words(r"percent|percentage|share|proportion|fraction|rate"), _GROUPED),
    ),
    Tip(
        "count per group",
        "Rows per a: df.groupby('a').size() (a Series indexed by a).",
        (_words(r"count|how many|number of"), _words(r"each|per|every|count (?:the )?\w+ by")),
        unless=_words(
            r"most (?:frequent|common|popular)|mode|busiest|mean|average|median"
            r"|percent|percentage|share|proportion|fraction|rate"
        ),
    ),
    Tip(
        "names for codes",
        "Names for codes: names = other.set_index('code')['name'], then df['code'].map(names) "
        "or s.rename(index=names).",
        (
            _words(
                r"full names?|names? (?:of|for|instead)|indexed by \w+ names?"
                r"|not (?:its|their|the) (?:\w+ )?codes?"
            ),
        ),
    ),
)


def tips_for(request: str) -> list[Tip]:
    """The tips whose triggers all match *request*, at most MAX_TIPS, in TIPS order."""
    chosen = [
        tip
        for tip in TIPS
        if all(p.search(request) for p in tip.needs)
        and not (tip.unless is not None and tip.unless.search(request))
    ]
    return chosen[:MAX_TIPS]


def tips_text(request: str, rows: Iterable[VarInfo] = ()) -> str:
    """The tips block for *request*, or "" when none applies.

    With the namespace's *rows*, the names tip names the real lookup frame and its key
    (`airlines.set_index('carrier')['name']`): a small model copies a placeholder such
    as 'code' literally.
    """
    tips = tips_for(request)
    if not tips:
        return ""
    lines = [TIPS_HEADER]
    for tip in tips:
        text = tip.text
        if tip.name == "names for codes":
            text = _names_tip(request, list(rows)) or text
        lines.append(f"- {text}")
    return "\n".join(lines)


def _names_tip(request: str, rows: list[VarInfo]) -> str | None:
    """The names tip for the one lookup frame with a `name` column the request is about."""
    lookups = [r for r in rows if r.relations.key and any(c.name == "name" for c in r.columns)]
    lowered = request.lower()
    about = [r for r in lookups if entity_stem(r.name) in lowered]
    chosen = about or lookups
    if len(chosen) != 1:
        return None
    frame, key = chosen[0].name, chosen[0].relations.key
    return (
        f"Names for codes: names = {frame}.set_index('{key}')['name'], then codes.map(names), "
        "or s.rename(index=names) for an index of codes."
    )


class RequestTips(BasePolicy):
    """Adds at most two pandas idioms under the namespace of a request that needs them."""

    name = "tips"

    async def before_request(self, turn: Turn) -> Intervention | None:
        text = tips_text(turn.task, await turn.rows())
        return self.act(InterventionKind.TIP, text) if text else None
