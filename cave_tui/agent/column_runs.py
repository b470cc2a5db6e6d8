"""Column names listed short: a run of names that differ only in their increasing numbers
(`sf_h00` … `sf_h23`, `pixel_0_0` … `pixel_7_7`, `1960` … `2013`) is written once, as
"sf_h00 to sf_h23 (24)", so that a wide frame's every column fits in a line the model reads."""

from __future__ import annotations

import re
from collections.abc import Sequence

NUMBERS = re.compile(r"\d+")
MIN_RUN = 4  # shorter runs are listed name by name


def _shape(name: str) -> str:
    return NUMBERS.sub("#", name)


def _numbers(name: str) -> tuple[int, ...]:
    return tuple(int(n) for n in NUMBERS.findall(name))


def with_runs(names: Sequence[str], min_run: int = MIN_RUN) -> list[tuple[str, int]]:
    """*names* in order as (text, how many columns it stands for): each run of at least
    *min_run* neighbours with the same text around increasing numbers is one entry,
    "first to last (count)"."""
    out: list[tuple[str, int]] = []
    i = 0
    while i < len(names):
        j = i
        shape = _shape(names[i])
        if "#" in shape:
            while (
                j + 1 < len(names)
                and _shape(names[j + 1]) == shape
                and _numbers(names[j + 1]) > _numbers(names[j])
            ):
                j += 1
        count = j - i + 1
        if count >= min_run:
            out.append((f"{names[i]} to {names[j]} ({count})", count))
        else:
            out.extend((name, 1) for name in names[i : j + 1])
        i = j + 1
    return out


def run_groups(names: Sequence[str], min_run: int = MIN_RUN) -> list[tuple[str, list[str]]]:
    """`with_runs`' entries, each with the names it stands for."""
    groups: list[tuple[str, list[str]]] = []
    start = 0
    for text, count in with_runs(names, min_run):
        groups.append((text, list(names[start : start + count])))
        start += count
    return groups


def named_in(names: Sequence[str], text: str) -> list[str]:
    """Those of *names* that *text* writes as a whole word (case aside), in order."""
    words = text.lower()
    return [n for n in names if re.search(rf"(?<!\w){re.escape(n.lower())}(?!\w)", words)]


WIDE_SHARE = 0.5  # a frame whose runs hold at least this share of its columns is wide
WIDE_COLUMNS = 8  # ... and at least this many


def wide_form_note(name: str, frame: str, columns: Sequence[str], request: str = "") -> str:
    """A sentence for a column *name* (no digits in it) that *frame* lacks where *frame* is
    wide: most of its columns are runs of numbered names (`sf_h00 to sf_h23`, `1960 to
    2013`), so what *name* (`city`, `year`) would tell apart is in the columns' names, not in
    a column; "" otherwise. The example column is one the *request* names, if any."""
    if NUMBERS.search(name):
        return ""  # a numbered name: a run's member mistyped, not another layout
    runs = [(text, group) for text, group in run_groups(columns) if len(group) > 1]
    held = sum(len(members) for _, members in runs)
    if held < WIDE_COLUMNS or held < WIDE_SHARE * len(columns):
        return ""
    members = [m for _, group in runs for m in group]
    example = next(iter(named_in(members, request)), members[0])
    listed = " and ".join(text for text, _ in runs[:3]) + (" and more" if len(runs) > 3 else "")
    return (
        f" {frame} is wide: {listed} are columns, one per value, so there is no {name!r} to "
        f"filter by: select the columns you need, e.g. {frame}[{example!r}]."
    )
